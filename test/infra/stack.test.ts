/**
 * The CDK stack's template: bucket settings, the start rule, the schedule, the state machine
 * (the definition of src/pipeline/definition.ts with the ARNs substituted), the functions,
 * least privilege, and cdk-nag's AwsSolutions checks with every finding acknowledged.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js';
import { describe, expect, it } from 'vitest';
import { APP_CONTEXT, readConfig } from '../../infra/config.ts';
import { addNagChecks } from '../../infra/nag.ts';
import {
  HANDLER_FILES,
  partMemoryMb,
  ReleaseStack,
  type ReleaseStackProps,
  shardMemoryMb,
} from '../../infra/stacks/release-stack.ts';
import { RELEASE_ERRORS, TASKS, type TaskName } from '../../src/pipeline/definition.ts';
import { ROOT_ENV } from '../../src/pipeline/states/plan.ts';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation template JSON
type Cfn = any;

// Template assertions do not need the real bundle (test/infra/bundle.test.ts builds it).
const handlersDir = mkdtempSync(join(tmpdir(), 'ppdp-handlers-'));
writeFileSync(join(handlersDir, 'plan.mjs'), 'export const handler = async () => ({});\n');

function synth(withNag = false, alertEmail?: string, more: Partial<ReleaseStackProps> = {}) {
  const app = new App({ context: APP_CONTEXT, outdir: mkdtempSync(join(tmpdir(), 'ppdp-cdk-')) });
  const stack = new ReleaseStack(app, 'Ppdp', {
    handlersDir,
    schedules: [{ name: 'adult', expression: 'cron(0 3 ? * MON *)', timeZone: 'Europe/Berlin' }],
    env: { account: '111111111111', region: 'us-east-1' },
    alertEmail,
    ...more,
  });
  if (withNag) addNagChecks(app);
  return { app, stack, template: Template.fromStack(stack) };
}

const { template, stack } = synth();

const EXISTING_KEY = 'arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab';

const idOf = (s: ReleaseStack, c: { node: { defaultChild?: unknown } }) =>
  s.getLogicalId(c.node.defaultChild as never);

/** A role's Allow statements, their resources flattened as cdk-nag writes them. */
function statementsOf(s: ReleaseStack, t: Template, role: { node: { defaultChild?: unknown } }) {
  const id = idOf(s, role);
  const policies = Object.values(t.findResources('AWS::IAM::Policy')) as { Properties: Cfn }[];
  return policies
    .filter((p) => p.Properties.Roles.some((r: Cfn) => r.Ref === id))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Cfn[])
    .map((st) => ({
      actions: [st.Action].flat() as string[],
      resources: [st.Resource].flat().map((r) => flattenCfnReference(r) as string),
    }));
}

/** Whether a Task's role may do `action` on `object`, IAM wildcards read as IAM reads them. */
function allows(s: ReleaseStack, t: Template, task: TaskName, action: string, object: string): boolean {
  const matches = (pattern: string) =>
    new RegExp(`^${pattern.split('*').map(escapeRegExp).join('.*')}$`).test(object);
  return statementsOf(s, t, s.functions[task].role!).some(
    (st) => st.actions.includes(action) && st.resources.some(matches),
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

describe('the deployment stack', () => {
  it('keeps the inbox, the work area and the releases in three buckets, each under its own KMS key', () => {
    const ids = [stack.inbox as s3.Bucket, stack.work, stack.releases].map((b) => idOf(stack, b));
    const resources = template.toJSON().Resources as Record<string, Cfn>;
    const encryption = ids.map(
      (id) =>
        resources[id].Properties.BucketEncryption.ServerSideEncryptionConfiguration[0]
          .ServerSideEncryptionByDefault,
    );
    for (const e of encryption) expect(e.SSEAlgorithm).toBe('aws:kms');
    const keyIds = encryption.map((e) => e.KMSMasterKeyID['Fn::GetAtt'][0]);
    expect(new Set(keyIds).size).toBe(3);
    for (const k of keyIds) expect(resources[k].Properties.EnableKeyRotation, k).toBe(true);
    for (const id of ids) {
      expect(resources[id].Properties, id).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        LoggingConfiguration: { DestinationBucketName: expect.anything() },
      });
      template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: id },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 's3:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
    // The inbox and the releases keep versions; the work area none, so nothing outlives its expiry.
    const [inbox, work, releases] = ids.map((id) => resources[id].Properties);
    expect(inbox.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(releases.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(work.VersioningConfiguration).toBeUndefined();
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      BucketName: { Ref: ids[0] },
      NotificationConfiguration: { EventBridgeConfiguration: {} },
    });
    expect(template.findOutputs('*')).toMatchObject({
      InboxBucketName: { Value: { Ref: ids[0] } },
      WorkBucketName: { Value: { Ref: ids[1] } },
      ReleaseBucketName: { Value: { Ref: ids[2] } },
    });
  });

  it('lets work files (a copy of the input rows) expire within a day', () => {
    const rulesOf = (s: ReleaseStack, t: Template) =>
      t.toJSON().Resources[idOf(s, s.work)].Properties.LifecycleConfiguration.Rules;
    expect(rulesOf(stack, template)).toEqual([
      { ExpirationInDays: 1, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
    ]);
    // A longer retention is a setting (docs/deploy.md).
    const longer = synth(false, undefined, { workRetentionDays: 3 });
    expect(rulesOf(longer.stack, longer.template)[0].ExpirationInDays).toBe(3);
  });

  it('tells every function where work files and releases go', () => {
    for (const task of TASKS) {
      const env =
        template.toJSON().Resources[idOf(stack, stack.functions[task])].Properties.Environment.Variables;
      expect(flattenCfnReference(env[ROOT_ENV.work]), task).toBe(`s3://<${idOf(stack, stack.work)}>/`);
      expect(flattenCfnReference(env[ROOT_ENV.releases]), task).toBe(
        `s3://<${idOf(stack, stack.releases)}>/`,
      );
    }
  });

  it('reads specs and inputs from an existing bucket when given one, decrypting with its key', () => {
    for (const keyArn of [EXISTING_KEY, undefined]) {
      const existing = synth(false, undefined, { inputBucket: { name: 'my-data', keyArn } });
      const t = existing.template;
      // The work and release buckets, and the access logs: no inbox bucket of the stack's own.
      expect(Object.keys(t.findResources('AWS::S3::Bucket'))).toHaveLength(3);
      const [rule] = Object.values(
        t.findResources('AWS::Events::Rule', { Properties: { EventPattern: { source: ['aws.s3'] } } }),
      ) as { Properties: Cfn }[];
      expect(rule!.Properties.EventPattern.detail.bucket).toEqual({ name: ['my-data'] });
      t.hasResourceProperties('Custom::S3BucketNotifications', {
        BucketName: 'my-data',
        NotificationConfiguration: { EventBridgeConfiguration: {} },
        Managed: false,
      });
      const object = 'arn:aws:s3:::my-data/inbox/adult/data.csv';
      for (const task of TASKS)
        expect(allows(existing.stack, t, task, 's3:GetObject', object), task).toBe(
          task === 'Plan' || task === 'ScanPiece',
        );
      const decrypts = (task: TaskName) =>
        statementsOf(existing.stack, t, existing.stack.functions[task].role!).some(
          (st) => st.actions.includes('kms:Decrypt') && st.resources.includes(EXISTING_KEY),
        );
      for (const task of TASKS)
        expect(decrypts(task), task).toBe((task === 'Plan' || task === 'ScanPiece') && keyArn !== undefined);
    }
  });

  it('starts a release when inbox/<name>/release.json lands, with the spec URL as input', () => {
    const rules = template.findResources('AWS::Events::Rule', {
      Properties: { EventPattern: { source: ['aws.s3'] } },
    });
    const [rule] = Object.values(rules) as { Properties: Cfn }[];
    expect(rule!.Properties.EventPattern).toMatchObject({
      source: ['aws.s3'],
      'detail-type': ['Object Created'],
      detail: {
        bucket: { name: [{ Ref: idOf(stack, stack.inbox as s3.Bucket) }] },
        object: { key: [{ wildcard: 'inbox/*/release.json' }] },
      },
    });
    const target = rule!.Properties.Targets[0];
    expect(target.InputTransformer.InputTemplate).toBe(
      '{"spec":"s3://<detail-bucket-name>/<detail-object-key>"}',
    );
    // The Start function, which names the execution after the run, not the state machine.
    expect(target.Arn).toEqual({
      'Fn::GetAtt': [stack.getLogicalId(stack.startFunction.node.defaultChild as never), 'Arn'],
    });
    expect(target.DeadLetterConfig).toBeDefined();
  });

  it('schedules recurring releases from the configuration', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(0 3 ? * MON *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      Target: Match.objectLike({
        Arn: { 'Fn::GetAtt': [stack.getLogicalId(stack.startFunction.node.defaultChild as never), 'Arn'] },
        Input: Match.anyValue(),
        DeadLetterConfig: Match.anyValue(),
        RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 4 }),
      }),
    });
    const [schedule] = Object.values(template.findResources('AWS::Scheduler::Schedule')) as {
      Properties: Cfn;
    }[];
    expect(JSON.stringify(schedule!.Properties.Target.Input)).toMatch(
      /\{\\"spec\\":\\"s3:\/\/.*inbox\/adult\/release\.json/,
    );
    expect(flattenCfnReference(schedule!.Properties.Target.Input)).toContain(
      `s3://<${idOf(stack, stack.inbox as s3.Bucket)}>/inbox/adult/release.json`,
    );
  });

  it('deploys the release definition with every Lambda ARN substituted, logged and traced', () => {
    const [sm] = Object.values(template.findResources('AWS::StepFunctions::StateMachine')) as {
      Properties: Cfn;
    }[];
    const props = sm!.Properties;
    expect(props.TracingConfiguration).toEqual({ Enabled: true });
    expect(props.LoggingConfiguration).toMatchObject({ Level: 'ALL', IncludeExecutionData: false });
    expect(Object.keys(props.DefinitionSubstitutions).sort()).toEqual(
      TASKS.map((t) => `${t}FunctionArn`).sort(),
    );
    const definition = JSON.parse(props.DefinitionString);
    expect(definition.States.Plan.Resource).toBe(`$${'{'}PlanFunctionArn}`);
    expect(definition.States.Count.ItemProcessor.ProcessorConfig.Mode).toBe('DISTRIBUTED');
  });

  it('runs one nodejs22.x arm64 function per Task, traced', () => {
    const fns = template.findResources('AWS::Lambda::Function', {
      Properties: { Handler: Match.stringLikeRegexp('\\.handler$') },
    });
    const ours = Object.values(fns).filter((f: Cfn) =>
      Object.values(HANDLER_FILES).some((h) => f.Properties.Handler === `${h}.handler`),
    );
    expect(ours).toHaveLength(TASKS.length + 1); // and Start
    for (const f of ours as { Properties: Cfn }[]) {
      expect(f.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        TracingConfig: { Mode: 'Active' },
      });
    }
  });

  it('lets only the states that read rows read the input rows, and each function only its keys', () => {
    const arn = (b: { node: { defaultChild?: unknown } }) => `<${idOf(stack, b)}.Arn>`;
    const run = `${arn(stack.work)}/work/adult/0123abcd/`;
    const release = `${arn(stack.releases)}/releases/adult/0123abcd/`;
    const who = (action: string, object: string) =>
      TASKS.filter((task) => allows(stack, template, task, action, object)).sort();
    const sorted = (...tasks: TaskName[]) => [...tasks].sort();
    // Verify's single-task verifier re-reads the whole input (src/pipeline/states/verify.ts).
    const rowReaders = sorted('CountShard', 'ApplyShard', 'VerifySlice', 'Build', 'Verify');
    expect(who('s3:GetObject', `${run}rows/3/0.arrow`)).toEqual(rowReaders);
    expect(who('s3:GetObject', `${run}rows/3/codes.bin`)).toEqual(rowReaders);
    expect(who('s3:GetObject', `${run}rows/dictionaries.arrow`)).toEqual(
      sorted(...rowReaders, 'Search', 'Audit'),
    );
    // The scan writes the shards of its piece; Combine the dictionaries and the code maps.
    expect(who('s3:PutObject', `${run}rows/3/0.arrow`)).toEqual(['ScanPiece']);
    expect(who('s3:PutObject', `${run}rows/3/codes.bin`)).toEqual(['Combine']);
    expect(who('s3:PutObject', `${run}rows/dictionaries.arrow`)).toEqual(['Combine']);
    expect(who('s3:GetObject', `${run}scan/3.arrow`)).toEqual(['Combine']);
    expect(who('s3:GetObject', `${run}counts/0.rows`)).toEqual(['ApplyShard']);
    expect(who('s3:GetObject', `${run}counts/0.bin`)).toEqual(['Search']);
    expect(who('s3:GetObject', `${run}scatter/0/0.arrow`)).toEqual(['Assemble']);
    expect(who('s3:GetObject', `${run}scatter/0/0.kept`)).toEqual(['Assemble']);
    // The bytes passed through, routed by ApplyShard beside the search, gathered by Assemble.
    expect(who('s3:PutObject', `${run}route/0/0.arrow`)).toEqual(['ApplyShard']);
    expect(who('s3:GetObject', `${run}route/0/0.arrow`)).toEqual(['Assemble']);
    // Their rows' hashes, taken beside the search, read by the input shards' slices after it.
    expect(who('s3:PutObject', `${run}verify/bytes-0.bin`)).toEqual(['VerifySlice']);
    expect(who('s3:GetObject', `${run}verify/bytes-0.bin`)).toEqual(sorted('VerifySlice', 'Verify'));
    expect(who('s3:GetObject', `${run}staging/data.csv`)).toEqual(sorted('VerifySlice', 'Verify', 'Publish'));
    // The audit reads the staged parts' Arrow files (and their seals), and only Verify its answer.
    const stagedArrowReaders = sorted('VerifySlice', 'Audit', 'Verify', 'Publish');
    expect(who('s3:GetObject', `${run}staging/data/part-00003.arrow`)).toEqual(stagedArrowReaders);
    expect(who('s3:GetObject', `${run}seals/staging/data/part-00003.arrow`)).toEqual(stagedArrowReaders);
    expect(who('s3:PutObject', `${run}audit.json`)).toEqual(['Audit']);
    expect(who('s3:GetObject', `${run}audit.json`)).toEqual(['Verify']);
    // The audit's first phase (beside the search) leaves the distinct values it counted to the second.
    expect(who('s3:PutObject', `${run}distinct.json`)).toEqual(['Audit']);
    expect(who('s3:GetObject', `${run}distinct.json`)).toEqual(['Audit']);
    // The scans' summaries: Combine, Audit, and Verify under differential privacy; the pieces'
    // pass-through values as hashes: Combine (a release in one task) and Audit (sharded).
    expect(who('s3:GetObject', `${run}scan/3.json`)).toEqual(sorted('Combine', 'Audit', 'Verify'));
    expect(who('s3:GetObject', `${run}scan/3.distinct`)).toEqual(sorted('Combine', 'Audit'));
    expect(who('s3:GetObject', `${run}plan.json`)).toEqual(
      TASKS.filter((t) => !/Plan|ReportFailure/.test(t)).sort(),
    );
    expect(who('s3:PutObject', `${run}error.json`)).toEqual(['ReportFailure']);
    expect(who('s3:DeleteObject', `${run}lock.json`)).toEqual(['Plan']);
    expect(who('s3:DeleteObject', `${run}rows/3/0.arrow`)).toEqual([]);
    // The inbox: read by Plan (the spec, the checks, the digest) and the scan, written by none.
    expect(who('s3:GetObject', `${arn(stack.inbox as s3.Bucket)}/inbox/adult/data.csv`)).toEqual(
      sorted('Plan', 'ScanPiece'),
    );
    expect(who('s3:PutObject', `${arn(stack.inbox as s3.Bucket)}/inbox/adult/release.json`)).toEqual([]);
    // The releases: written by Publish; a folder's lock by Plan and ReportFailure too, and the
    // failure record by ReportFailure (Publish removes it once the release is out).
    expect(who('s3:PutObject', `${release}data.csv`)).toEqual(['Publish']);
    expect(who('s3:GetObject', `${release}data.csv`)).toEqual(['Publish']);
    expect(who('s3:PutObject', `${release}.ppdp-lock`)).toEqual(sorted('Plan', 'Publish', 'ReportFailure'));
    expect(who('s3:PutObject', `${arn(stack.releases)}/releases/adult/error.json`)).toEqual(
      sorted('Publish', 'ReportFailure'),
    );
    // The state machine's ItemReader reads the item lists only.
    const machine = statementsOf(stack, template, stack.stateMachine.role);
    const reads = machine.filter((st) => st.actions.includes('s3:GetObject')).flatMap((st) => st.resources);
    expect(reads.sort()).toEqual(
      ['parts.json', 'pieces.json', 'shards.json'].map((k) => `${arn(stack.work)}/work/*/${k}`),
    );
  });

  it('lets each function decrypt only with the keys of the buckets it reads', () => {
    const keyOf = (k: { node: { defaultChild?: unknown } }) => `<${idOf(stack, k)}.Arn>`;
    const who = (action: string, key: string) =>
      TASKS.filter((task) =>
        statementsOf(stack, template, stack.functions[task].role!).some(
          (st) => st.actions.includes(action) && st.resources.includes(key),
        ),
      ).sort();
    expect(who('kms:Decrypt', keyOf(stack.keys.inbox!))).toEqual(['Plan', 'ScanPiece']);
    expect(who('kms:GenerateDataKey', keyOf(stack.keys.inbox!))).toEqual([]);
    expect(who('kms:Decrypt', keyOf(stack.keys.releases))).toEqual(['Plan', 'Publish', 'ReportFailure']);
    expect(who('kms:Decrypt', keyOf(stack.keys.work))).toEqual(
      TASKS.filter((t) => t !== 'ReportFailure').sort(),
    );
    expect(who('kms:GenerateDataKey', keyOf(stack.keys.work))).toEqual(
      TASKS.filter((t) => t !== 'Publish').sort(),
    );
  });

  it('publishes failed, timed-out and aborted executions of this state machine to an encrypted topic', () => {
    const topicId = stack.getLogicalId(stack.failureTopic.node.defaultChild as never);
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: Match.objectLike({ StringEquals: { 'aws:SourceAccount': '111111111111' } }),
          }),
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'events.amazonaws.com' },
            Action: 'sns:Publish',
          }),
        ]),
      },
    });
    const [rule] = Object.values(
      template.findResources('AWS::Events::Rule', {
        Properties: { EventPattern: { source: ['aws.states'] } },
      }),
    ) as { Properties: Cfn }[];
    expect(rule!.Properties.EventPattern).toEqual({
      source: ['aws.states'],
      'detail-type': ['Step Functions Execution Status Change'],
      detail: {
        status: ['FAILED', 'TIMED_OUT', 'ABORTED'],
        stateMachineArn: [{ Ref: stack.getLogicalId(stack.stateMachine.node.defaultChild as never) }],
      },
    });
    const [target] = rule!.Properties.Targets;
    expect(target.Arn).toEqual({ Ref: topicId });
    // The message carries names and locations, never the error's cause.
    expect(target.InputTransformer.InputPathsMap).toMatchObject({
      'detail-status': '$.detail.status',
      'detail-executionArn': '$.detail.executionArn',
    });
    expect(Object.values(target.InputTransformer.InputPathsMap)).not.toContain('$.detail.cause');
    // Failures the definition does not catch get their error.json from ReportFailure, which
    // receives the whole event (the cause goes to error.json, never to the topic).
    const reportFailure = stack.getLogicalId(stack.functions.ReportFailure.node.defaultChild as never);
    const second = rule!.Properties.Targets[1];
    expect(second.Arn).toEqual({ 'Fn::GetAtt': [reportFailure, 'Arn'] });
    expect(second.Input ?? second.InputTransformer ?? second.InputPath).toBeUndefined();
    expect(second.DeadLetterConfig).toBeDefined();
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [reportFailure, 'Arn'] },
      Principal: 'events.amazonaws.com',
    });
    expect(template.findOutputs('FailureTopicArn')).toEqual({
      FailureTopicArn: { Value: { Ref: topicId } },
    });
    // The key lets EventBridge and CloudWatch publish to the encrypted topic.
    const keys = JSON.stringify(template.findResources('AWS::KMS::Key'));
    for (const service of ['events.amazonaws.com', 'cloudwatch.amazonaws.com'])
      expect(keys).toContain(service);
    template.resourceCountIs('AWS::SNS::Subscription', 0);
    synth(false, 'ops@example.org').template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.org',
      TopicArn: Match.anyValue(),
    });
  });

  it('alarms to the topic on failed and timed-out executions and on start failures', () => {
    const topicId = stack.getLogicalId(stack.failureTopic.node.defaultChild as never);
    const machine = { Ref: stack.getLogicalId(stack.stateMachine.node.defaultChild as never) };
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as { Properties: Cfn }[];
    const byMetric = Object.fromEntries(alarms.map((a) => [a.Properties.MetricName, a.Properties]));
    expect(Object.keys(byMetric).sort()).toEqual(
      ['ApproximateNumberOfMessagesVisible', 'ExecutionsFailed', 'ExecutionsTimedOut'].sort(),
    );
    for (const a of Object.values(byMetric)) {
      expect(a).toMatchObject({
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        AlarmActions: [{ Ref: topicId }],
      });
    }
    expect(byMetric.ExecutionsFailed).toMatchObject({
      Namespace: 'AWS/States',
      Dimensions: [{ Name: 'StateMachineArn', Value: machine }],
    });
    expect(byMetric.ExecutionsTimedOut!.Dimensions).toEqual([{ Name: 'StateMachineArn', Value: machine }]);
    expect(byMetric.ApproximateNumberOfMessagesVisible).toMatchObject({ Namespace: 'AWS/SQS' });
  });

  it('leaves failures other than ppdp refusals uncaught, and lets its role redrive Map children', () => {
    const [sm] = Object.values(template.findResources('AWS::StepFunctions::StateMachine')) as {
      Properties: Cfn;
    }[];
    const states = JSON.parse(sm!.Properties.DefinitionString).States;
    for (const name of [
      'Plan',
      'Scan',
      'Combine',
      'Count',
      'Searching',
      'Release',
      'Build',
      'Verify',
      'Publish',
    ]) {
      expect(states[name].Catch, name).toEqual([
        { ErrorEquals: RELEASE_ERRORS, ResultPath: '$.error', Next: 'ReportFailure' },
      ]);
    }
    // The maps and tasks in the Parallel states' branches fail them, and their Catch decides.
    for (const branch of [...states.Searching.Branches, ...states.Release.Branches])
      for (const [name, st] of Object.entries(branch.States)) expect((st as Cfn).Catch, name).toBeUndefined();
    const role = stack.getLogicalId(stack.stateMachine.role.node.defaultChild as never);
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as { Properties: Cfn }[];
    const own = JSON.stringify(policies.filter((p) => p.Properties.Roles.some((r: Cfn) => r.Ref === role)));
    expect(own).toContain('states:RedriveExecution');
  });

  it("lets Start read the inbox and start, describe and redrive this state machine's executions only", () => {
    const role = stack.getLogicalId(stack.startFunction.role!.node.defaultChild as never);
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p: Cfn) =>
      p.Properties.Roles.some((r: Cfn) => r.Ref === role),
    ) as { Properties: Cfn }[];
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Cfn[]);
    const on = (action: string) =>
      JSON.stringify(statements.filter((st) => [st.Action].flat().includes(action)).map((st) => st.Resource));
    const machine = stack.getLogicalId(stack.stateMachine.node.defaultChild as never);
    expect(on('states:StartExecution')).toBe(JSON.stringify([{ Ref: machine }]));
    for (const action of ['states:DescribeExecution', 'states:RedriveExecution'])
      expect(on(action), action).toMatch(/:execution:Ppdp-release:\*"/);
    expect(on('s3:GetObject')).toMatch(/\/inbox\/\*"/);
    expect(on('s3:GetObject')).not.toMatch(/work|releases/);
    expect(on('s3:PutObject')).toBe('[]');
    const fn = stack.getLogicalId(stack.startFunction.node.defaultChild as never);
    // A Start that fails goes where undelivered starts go: the alarmed dead-letter queue.
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: fn },
      MaximumRetryAttempts: 2,
      DestinationConfig: {
        OnFailure: {
          Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^StartFailures'), 'Arn'] },
        },
      },
    });
    expect(template.toJSON().Resources[fn].Properties.Environment.Variables.PPDP_STATE_MACHINE_ARN).toEqual({
      Ref: machine,
    });
  });

  it('sets up Powertools and the run lock on every function', () => {
    for (const task of TASKS) {
      const fn = stack.getLogicalId(stack.functions[task].node.defaultChild as never);
      const props = template.toJSON().Resources[fn].Properties;
      expect(props.TracingConfig, task).toEqual({ Mode: 'Active' });
      expect(props.Environment.Variables, task).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'ppdp',
        POWERTOOLS_METRICS_NAMESPACE: 'ppdp',
        PPDP_RUN_LOCK: 'on',
      });
    }
  });

  it("gives Plan every function's memory to admit a release against, and takes overrides from ppdp:memoryMb", () => {
    const envOf = (t: Template, s: ReleaseStack, task: TaskName) =>
      t.toJSON().Resources[s.getLogicalId(s.functions[task].node.defaultChild as never)].Properties;
    const sizes = JSON.parse(envOf(template, stack, 'Plan').Environment.Variables.PPDP_STATE_MEMORY_MB);
    expect(sizes).toMatchObject({ Plan: 3008, CountShard: 512, ApplyShard: 512, Search: 3008 });
    const big = synth(false, undefined, { memoryMb: { Search: 10_240 } });
    expect(envOf(big.template, big.stack, 'Search').MemorySize).toBe(10_240);
    expect(
      JSON.parse(envOf(big.template, big.stack, 'Plan').Environment.Variables.PPDP_STATE_MEMORY_MB),
    ).toMatchObject({
      Search: 10_240,
    });
  });

  it('sizes the shard and part functions from their measured peak memory, with twice the room', () => {
    const memory = (task: 'CountShard' | 'ApplyShard' | 'Verify' | 'Assemble' | 'VerifySlice') =>
      template.toJSON().Resources[stack.getLogicalId(stack.functions[task].node.defaultChild as never)]
        .Properties.MemorySize;
    expect(memory('CountShard')).toBe(512);
    expect(memory('ApplyShard')).toBe(512);
    expect(memory('Verify')).toBe(3008);
    // The output part states, from the per-process run of the deployed handlers at 10^7 rows.
    const deployed = JSON.parse(
      readFileSync(new URL('../../bench/results/deployed.json', import.meta.url), 'utf8'),
    ) as { runs: { rows: number; states: Record<string, { peakMiB: number }> }[] };
    const large = deployed.runs.find((r) => r.rows === 10_000_000)!;
    for (const task of ['Assemble', 'VerifySlice'] as const) {
      expect(memory(task)).toBe(partMemoryMb(2_000_000));
      expect(2 * ((large.states[task]!.peakMiB * 2 ** 20) / 1e6), task).toBeLessThanOrEqual(memory(task));
    }
    const measured = JSON.parse(
      readFileSync(new URL('../../bench/results/state-memory.json', import.meta.url), 'utf8'),
    ) as { runs: { rowsPerShard: number; states: Record<string, { peakRssMiB: number }> }[] };
    expect(measured.runs.map((r) => r.rowsPerShard)).toEqual(expect.arrayContaining([1_000_000, 2_000_000]));
    for (const run of measured.runs) {
      for (const task of ['CountShard', 'ApplyShard']) {
        const peakMb = (run.states[task]!.peakRssMiB * 2 ** 20) / 1e6;
        expect(2 * peakMb, `${task}, ${run.rowsPerShard} rows per shard`).toBeLessThanOrEqual(
          shardMemoryMb(run.rowsPerShard),
        );
      }
    }
  });

  it('passes cdk-nag AwsSolutions with every finding acknowledged', () => {
    const { app } = synth(true);
    expect(() => app.synth()).not.toThrow();
    const existing = synth(true, undefined, { inputBucket: { name: 'my-data', keyArn: EXISTING_KEY } });
    expect(() => existing.app.synth()).not.toThrow();
  });

  it('reads schedules and limits from context', () => {
    const app = new App({
      context: {
        'ppdp:schedules': '[{"name":"adult","expression":"rate(7 days)"}]',
        'ppdp:mapConcurrency': '40',
      },
    });
    expect(readConfig(app.node)).toMatchObject({
      stackName: 'Ppdp',
      schedules: [{ name: 'adult', expression: 'rate(7 days)' }],
      mapConcurrency: 40,
    });
    const bad = new App({ context: { 'ppdp:schedules': [{ name: 'adult', expression: 'daily' }] } });
    expect(() => readConfig(bad.node)).toThrow(/cron/);
    for (const name of ['..', '.', 'a/b', ''])
      expect(() =>
        readConfig(new App({ context: { 'ppdp:schedules': [{ name, expression: 'rate(1 day)' }] } }).node),
      ).toThrow(/must be a release name/);
    const email = (v: string) => readConfig(new App({ context: { 'ppdp:alertEmail': v } }).node).alertEmail;
    expect(email('ops@example.org')).toBe('ops@example.org');
    expect(email('')).toBeUndefined();
    expect(() => email('ops at example.org')).toThrow(/ppdp:alertEmail must be one email address/);
    const input = (context: Record<string, string>) => readConfig(new App({ context }).node).inputBucket;
    expect(input({})).toBeUndefined();
    expect(input({ 'ppdp:inputBucket': 'my-data' })).toEqual({ name: 'my-data', keyArn: undefined });
    expect(input({ 'ppdp:inputBucket': 'my-data', 'ppdp:inputKeyArn': EXISTING_KEY })).toEqual({
      name: 'my-data',
      keyArn: EXISTING_KEY,
    });
    expect(() => input({ 'ppdp:inputBucket': 'My_Data' })).toThrow(
      /ppdp:inputBucket must be an S3 bucket name/,
    );
    expect(() => input({ 'ppdp:inputKeyArn': EXISTING_KEY })).toThrow(/give that bucket too/);
    expect(() => input({ 'ppdp:inputBucket': 'my-data', 'ppdp:inputKeyArn': 'alias/mine' })).toThrow(
      /ppdp:inputKeyArn must be a KMS key ARN/,
    );
  });
});
