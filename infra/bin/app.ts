/**
 * The CDK app: `cdk synth` / `cdk deploy` from infra/ (see docs/deploy.md). The handlers
 * are bundled with esbuild first (WASM embedded), then the stack is checked with cdk-nag.
 */
import { App } from 'aws-cdk-lib';
import { bundleHandlers } from '../bundle.ts';
import { APP_CONTEXT, readConfig } from '../config.ts';
import { addNagChecks } from '../nag.ts';
import { ReleaseStack } from '../stacks/release-stack.ts';

const app = new App({ context: APP_CONTEXT });
const config = readConfig(app.node);
new ReleaseStack(app, config.stackName, {
  handlersDir: bundleHandlers(),
  schedules: config.schedules,
  mapConcurrency: config.mapConcurrency,
  rowsPerShard: config.rowsPerShard,
  memoryMb: config.memoryMb,
  workRetentionDays: config.workRetentionDays,
  alertEmail: config.alertEmail,
  inputBucket: config.inputBucket,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: 'ppdp: privacy-preserving microdata releases on Step Functions and Lambda',
});
addNagChecks(app);
app.synth();
