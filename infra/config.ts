/**
 * The app's configuration, from CDK context (cdk.json or `-c key=value`):
 *   ppdp:stackName        stack name (default Ppdp)
 *   ppdp:schedules        recurring releases: [{ "name": "adult", "expression": "cron(0 3 ? * MON *)",
 *                         "timeZone": "Europe/Berlin" }] (a JSON string with -c)
 *   ppdp:mapConcurrency   concurrent shard workers per Distributed Map (default 100)
 *   ppdp:rowsPerShard     rows per shard (default 1000000)
 *   ppdp:memoryMb         memory (MB, 128–10240) of some states instead of their sizing, e.g.
 *                         {"Search": 10240} (a JSON string with -c); Plan admits a release
 *                         against these sizes
 *   ppdp:workRetentionDays  days work files are kept (default 1: they hold a copy of the input's rows)
 *   ppdp:inputBucket      an existing bucket to take specs and inputs from (its inbox/<name>/…)
 *                         instead of the stack's own inbox bucket
 *   ppdp:inputKeyArn      that bucket's KMS key ARN, when it is encrypted with one
 *   ppdp:alertEmail       an address subscribed to the failure topic (optional; confirm the
 *                         subscription from the email AWS sends)
 */
import type { Node } from 'constructs';
import { TASKS } from '../src/pipeline/definition.ts';
import type { InputBucket, MemoryOverrides, ScheduledRelease } from './stacks/release-stack.ts';

export interface AppConfig {
  readonly stackName: string;
  readonly schedules: ScheduledRelease[];
  readonly mapConcurrency?: number;
  readonly rowsPerShard?: number;
  readonly memoryMb?: MemoryOverrides;
  readonly workRetentionDays?: number;
  readonly alertEmail?: string;
  readonly inputBucket?: InputBucket;
}

const NAME = /^[A-Za-z0-9._-]{1,48}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** An S3 bucket name: 3–63 lower-case letters, digits, dots and hyphens, not an IP address. */
const BUCKET = /^(?!\d+\.\d+\.\d+\.\d+$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;
const EXPRESSION = /^(cron\(.+\)|rate\(\d+ (minute|minutes|hour|hours|day|days)\)|at\(.+\))$/;

export function readConfig(node: Node): AppConfig {
  const ctx = (k: string): unknown => {
    const v = node.tryGetContext(k);
    if (typeof v === 'string' && /^[[{]/.test(v.trim())) return JSON.parse(v);
    return v;
  };
  const num = (k: string): number | undefined => {
    const v = ctx(k);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`context ${k} must be a whole number ≥ 1 (got ${String(v)})`);
    return n;
  };
  const schedules = (ctx('ppdp:schedules') ?? []) as ScheduledRelease[];
  if (!Array.isArray(schedules))
    throw new Error('context ppdp:schedules must be a list of { name, expression }');
  for (const [i, s] of schedules.entries()) {
    // `.` and `..` match the pattern but are folders no release may be named after.
    if (!NAME.test(s?.name ?? '') || s.name === '.' || s.name === '..')
      throw new Error(
        `ppdp:schedules[${i}].name must be a release name (letters, digits, . _ -; not . or ..)`,
      );
    if (!EXPRESSION.test(s.expression ?? '')) {
      throw new Error(
        `ppdp:schedules[${i}].expression must be cron(…), rate(…) or at(…), e.g. cron(0 3 * * ? *)`,
      );
    }
  }
  const memoryMb = (ctx('ppdp:memoryMb') ?? undefined) as Record<string, unknown> | undefined;
  if (memoryMb !== undefined) {
    if (typeof memoryMb !== 'object' || memoryMb === null || Array.isArray(memoryMb))
      throw new Error('context ppdp:memoryMb must be an object of state → MB, e.g. {"Search": 10240}');
    for (const [state, mb] of Object.entries(memoryMb)) {
      if (!(TASKS as readonly string[]).includes(state))
        throw new Error(`context ppdp:memoryMb names ${state}, not a state (one of ${TASKS.join(', ')})`);
      if (!Number.isInteger(mb) || (mb as number) < 128 || (mb as number) > 10_240)
        throw new Error(
          `context ppdp:memoryMb.${state} must be a whole number of MB from 128 to 10240 (got ${String(mb)})`,
        );
    }
  }
  const alertEmail = ctx('ppdp:alertEmail') || undefined;
  if (alertEmail !== undefined && (typeof alertEmail !== 'string' || !EMAIL.test(alertEmail))) {
    throw new Error(
      `context ppdp:alertEmail must be one email address, e.g. ops@example.org (got ${String(alertEmail)})`,
    );
  }
  const inputBucket = ctx('ppdp:inputBucket') || undefined;
  const inputKeyArn = ctx('ppdp:inputKeyArn') || undefined;
  if (inputBucket !== undefined && (typeof inputBucket !== 'string' || !BUCKET.test(inputBucket))) {
    throw new Error(
      `context ppdp:inputBucket must be an S3 bucket name, e.g. my-data-bucket (got ${String(inputBucket)})`,
    );
  }
  if (inputKeyArn !== undefined) {
    if (inputBucket === undefined)
      throw new Error('context ppdp:inputKeyArn is the key of ppdp:inputBucket: give that bucket too');
    if (typeof inputKeyArn !== 'string' || !KEY_ARN.test(inputKeyArn)) {
      throw new Error(
        `context ppdp:inputKeyArn must be a KMS key ARN, e.g. arn:aws:kms:eu-west-1:111111111111:key/<key id> (got ${String(inputKeyArn)})`,
      );
    }
  }
  return {
    stackName: (ctx('ppdp:stackName') as string | undefined) ?? 'Ppdp',
    schedules,
    mapConcurrency: num('ppdp:mapConcurrency'),
    rowsPerShard: num('ppdp:rowsPerShard'),
    ...(memoryMb ? { memoryMb: memoryMb as MemoryOverrides } : {}),
    workRetentionDays: num('ppdp:workRetentionDays'),
    alertEmail: alertEmail as string | undefined,
    ...(inputBucket
      ? { inputBucket: { name: inputBucket as string, keyArn: inputKeyArn as string | undefined } }
      : {}),
  };
}

/** Feature flags the stack is written for (also for apps built in tests). */
export const APP_CONTEXT: Record<string, unknown> = {
  '@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy': true,
  '@aws-cdk/core:enablePartitionLiterals': true,
  '@aws-cdk/aws-iam:minimizePolicies': true,
  '@aws-cdk/aws-lambda:useCdkManagedLogGroup': true,
};
