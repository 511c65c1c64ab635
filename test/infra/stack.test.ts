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
import { describe, expect, it } from 'vitest';
import { APP_CONTEXT, readConfig } from '../../infra/config.ts';
import { addNagChecks } from '../../infra/nag.ts';
import {
  HANDLER_FILES,
  partMemoryMb,
  ReleaseStack,
  shardMemoryMb,
} from '../../infra/stacks/release-stack.ts';
import { RELEASE_ERRORS, TASKS } from '../../src/pipeline/definition.ts';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation template JSON
type Cfn = any;

// Template assertions do not need the real bundle (test/infra/bundle.test.ts builds it).
const handlersDir = mkdtempSync(join(tmpdir(), 'ppdp-handlers-'));
writeFileSync(join(handlersDir, 'plan.mjs'), 'export const handler = async () => ({});\n');

function synth(withNag = false, alertEmail?: string) {
  const app = new App({ context: APP_CONTEXT, outdir: mkdtempSync(join(tmpdir(), 'ppdp-cdk-')) });
  const stack = new ReleaseStack(app, 'Ppdp', {
    handlersDir,
    schedules: [{ name: 'adult', expression: 'cron(0 3 ? * MON *)', timeZone: 'Europe/Berlin' }],
    env: { account: '111111111111', region: 'us-east-1' },
    alertEmail,
  });
  if (withNag) addNagChecks(app);
  return { app, stack, template: Template.fromStack(stack) };
}

const { template, stack } = synth();

describe('the deployment stack', () => {
  it('keeps data in a KMS-encrypted, versioned, logged bucket with public access blocked and TLS enforced', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          Match.objectLike({
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: Match.anyValue() },
          }),
        ],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      VersioningConfiguration: { Status: 'Enabled' },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: Match.anyValue() }),
    });
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: { EventBridgeConfiguration: {} },
    });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    const dataBucket = stack.getLogicalId(stack.bucket.node.defaultChild as never);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: dataBucket },
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
  });

  it('starts a release when inbox/<name>/release.json lands, with the spec URL as input', () => {
    const rules = template.findResources('AWS::Events::Rule', {
      Properties: { EventPattern: { source: ['aws.s3'] } },
    });
    const [rule] = Object.values(rules) as { Properties: Cfn }[];
    expect(rule!.Properties.EventPattern).toMatchObject({
      source: ['aws.s3'],
      'detail-type': ['Object Created'],
      detail: { object: { key: [{ wildcard: 'inbox/*/release.json' }] } },
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

  it('gives each function only the prefixes it needs', () => {
    const policyOf = (task: string) => {
      const role = stack.getLogicalId(stack.functions[task as 'Plan'].role!.node.defaultChild as never);
      const policies = Object.values(template.findResources('AWS::IAM::Policy')) as { Properties: Cfn }[];
      return JSON.stringify(policies.filter((p) => p.Properties.Roles.some((r: Cfn) => r.Ref === role)));
    };
    expect(policyOf('Plan')).toMatch(/inbox\/\*/);
    // Plan writes in releases/ only the folder's lock (src/pipeline/publish.ts); ReportFailure
    // also the failure's record for the release's users.
    const writesOf = (task: string) =>
      (JSON.parse(policyOf(task)) as { Properties: Cfn }[])
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Cfn[])
        .filter((st) => [st.Action].flat().some((a: string) => /^s3:(Put|Delete)Object$/.test(a)))
        .map((st) => JSON.stringify(st.Resource));
    for (const task of ['Plan', 'ReportFailure']) {
      const inReleases = writesOf(task).filter((r) => r.includes('releases/'));
      const allowed =
        task === 'Plan'
          ? [/releases\/\*\/\.ppdp-lock\*"/]
          : [/releases\/\*\/\.ppdp-lock\*"/, /releases\/\*\/error\.json"/];
      const keys = inReleases.flatMap((r) => r.match(/releases\/[^"]*"/g) ?? []);
      expect(keys.map((k) => allowed.findIndex((a) => a.test(k))).sort(), task).toEqual(
        allowed.map((_, i) => i),
      );
    }
    expect(policyOf('ApplyShard')).not.toMatch(/inbox\/|releases\//);
    expect(policyOf('Publish')).toMatch(/releases\/\*/);
    expect(policyOf('Publish')).not.toMatch(/inbox\//);
    expect(policyOf('Publish')).toMatch(/s3:DeleteObject/);
    expect(policyOf('CountShard')).not.toMatch(/s3:DeleteObject/);
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
    for (const name of ['Plan', 'Count', 'Search', 'Apply', 'Parts', 'Build', 'Verify', 'Publish']) {
      expect(states[name].Catch, name).toEqual([
        { ErrorEquals: RELEASE_ERRORS, ResultPath: '$.error', Next: 'ReportFailure' },
      ]);
    }
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
    const email = (v: string) => readConfig(new App({ context: { 'ppdp:alertEmail': v } }).node).alertEmail;
    expect(email('ops@example.org')).toBe('ops@example.org');
    expect(email('')).toBeUndefined();
    expect(() => email('ops at example.org')).toThrow(/ppdp:alertEmail must be one email address/);
  });
});
