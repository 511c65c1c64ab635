/**
 * The CDK stack's template: bucket settings, the start rule, the schedule, the state machine
 * (the definition of src/pipeline/definition.ts with the ARNs substituted), the functions,
 * least privilege, and cdk-nag's AwsSolutions checks with every finding acknowledged.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { APP_CONTEXT, readConfig } from '../../infra/config.ts';
import { addNagChecks } from '../../infra/nag.ts';
import { HANDLER_FILES, ReleaseStack } from '../../infra/stacks/release-stack.ts';
import { TASKS } from '../../src/pipeline/definition.ts';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation template JSON
type Cfn = any;

// Template assertions do not need the real bundle (test/infra/bundle.test.ts builds it).
const handlersDir = mkdtempSync(join(tmpdir(), 'ppdp-handlers-'));
writeFileSync(join(handlersDir, 'plan.mjs'), 'export const handler = async () => ({});\n');

function synth(withNag = false) {
  const app = new App({ context: APP_CONTEXT, outdir: mkdtempSync(join(tmpdir(), 'ppdp-cdk-')) });
  const stack = new ReleaseStack(app, 'Ppdp', {
    handlersDir,
    schedules: [{ name: 'adult', expression: 'cron(0 3 ? * MON *)', timeZone: 'Europe/Berlin' }],
    env: { account: '111111111111', region: 'us-east-1' },
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
    const rules = template.findResources('AWS::Events::Rule');
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
    expect(target.DeadLetterConfig).toBeDefined();
  });

  it('schedules recurring releases from the configuration', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'cron(0 3 ? * MON *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      Target: Match.objectLike({ Arn: { Ref: Match.stringLikeRegexp('Release') }, Input: Match.anyValue() }),
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
    expect(ours).toHaveLength(TASKS.length);
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
    // Plan writes in releases/ only the folder's lock (src/pipeline/publish.ts).
    const writesOf = (task: string) =>
      (JSON.parse(policyOf(task)) as { Properties: Cfn }[])
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Cfn[])
        .filter((st) => [st.Action].flat().some((a: string) => /^s3:(Put|Delete)Object$/.test(a)))
        .map((st) => JSON.stringify(st.Resource));
    for (const task of ['Plan', 'ReportFailure']) {
      const inReleases = writesOf(task).filter((r) => r.includes('releases/'));
      expect(inReleases, task).toHaveLength(1);
      expect(inReleases[0]).toMatch(/releases\/\*\/\.ppdp-lock\*/);
    }
    expect(policyOf('ApplyShard')).not.toMatch(/inbox\/|releases\//);
    expect(policyOf('Publish')).toMatch(/releases\/\*/);
    expect(policyOf('Publish')).not.toMatch(/inbox\//);
    expect(policyOf('Publish')).toMatch(/s3:DeleteObject/);
    expect(policyOf('CountShard')).not.toMatch(/s3:DeleteObject/);
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
  });
});
