/**
 * ppdp in an AWS account: three buckets, each under its own KMS key — the inbox (specs and
 * inputs; or an existing bucket of yours), the work area (expiring within a day) and the
 * releases — with each function reading only the keys its state needs, the release state machine
 * (the definition of src/pipeline/definition.ts, Lambda ARNs substituted), one Lambda per
 * Task, a Start function that starts one execution per run (src/pipeline/start.ts), invoked
 * by an EventBridge rule when `inbox/<name>/release.json` lands and by EventBridge Scheduler
 * schedules for recurring releases, and the alerts: a failure topic fed
 * by an execution-status rule and by alarms on failed or timed-out executions and start failures.
 */
import {
  Arn,
  ArnFormat,
  CfnOutput,
  type CfnResource,
  Duration,
  RemovalPolicy,
  Size,
  Stack,
  type StackProps,
  TimeZone,
  Validations,
} from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as schedulerTargets from 'aws-cdk-lib/aws-scheduler-targets';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js';
import type { Construct, IConstruct } from 'constructs';
import { STATE_MEMORY_ENV } from '../../src/data/limits.ts';
import {
  placeholder,
  RELEASE_ERRORS,
  releaseDefinition,
  TASKS,
  type TaskName,
} from '../../src/pipeline/definition.ts';
import { PART_BYTES_PER_ROW, SHARD_BYTES_PER_ROW } from '../../src/pipeline/states/item-rows.ts';
import { ROOT_ENV } from '../../src/pipeline/states/plan.ts';
import { DEFAULT_ROWS_PER_PART } from '../../src/pipeline/states/types.ts';
import { ACCESS, type Area, type KeyAccess, MAP_ITEMS, wildcardReason } from './access.ts';

export interface ScheduledRelease {
  /** The release name: its spec is `inbox/<name>/release.json`. */
  readonly name: string;
  /** An EventBridge Scheduler expression, e.g. `cron(0 3 * * ? *)` or `rate(7 days)`. */
  readonly expression: string;
  /** IANA time zone of a cron expression (default UTC). */
  readonly timeZone?: string;
}

export interface ReleaseStackProps extends StackProps {
  /** Folder with the bundled handlers (`<file>.mjs` per Task); see infra/bundle.ts. */
  readonly handlersDir: string;
  readonly schedules?: readonly ScheduledRelease[];
  /** Concurrent shard workers per Distributed Map (default 100). */
  readonly mapConcurrency?: number;
  /** Rows per shard (default 1,000,000). */
  readonly rowsPerShard?: number;
  /** Memory (MB) of some states instead of their sizing, e.g. { Search: 10240 }. */
  readonly memoryMb?: MemoryOverrides;
  /**
   * Days work files are kept (default 1, the shortest S3 lifecycle rule): they hold a copy of
   * the input's rows. A run that has stopped can be redriven while its work files are there.
   */
  readonly workRetentionDays?: number;
  /**
   * An existing bucket to take specs and inputs from (its `inbox/<name>/…`) instead of the
   * stack's own inbox bucket; `keyArn` is its KMS key, if it is encrypted with one.
   */
  readonly inputBucket?: InputBucket;
  /** An email address subscribed to the failure topic. */
  readonly alertEmail?: string;
}

/** An existing bucket ppdp reads specs and inputs from. */
export interface InputBucket {
  readonly name: string;
  /** The bucket's KMS key, when its objects are encrypted with one (SSE-KMS). */
  readonly keyArn?: string;
}

/** The handler file of each Task, and of Start (functions/<file>.ts). */
export const HANDLER_FILES: Record<TaskName | 'Start', string> = {
  Start: 'start',
  Plan: 'plan',
  ScanPiece: 'scan-piece',
  Combine: 'combine',
  CountShard: 'count-shard',
  Search: 'search',
  ApplyShard: 'apply-shard',
  Assemble: 'assemble',
  VerifySlice: 'verify-slice',
  Audit: 'audit',
  Build: 'build',
  Verify: 'verify',
  Publish: 'publish',
  ReportFailure: 'report-failure',
};

interface Sizing {
  readonly memory: number;
  readonly timeout: Duration;
  readonly tmp: number;
}
const BIG: Sizing = { memory: 3008, timeout: Duration.minutes(15), tmp: 4096 };
/**
 * Start reads the spec and streams the input through a digest, one 8 MiB piece at a time: its
 * memory buys network bandwidth, its timeout covers an input of tens of GB.
 */
const START: Sizing = { memory: 1024, timeout: Duration.minutes(15), tmp: 512 };

/**
 * A shard function's memory (MB): CountShard and ApplyShard peak at about 100 MiB plus 150 MiB
 * per million rows of their shard, whatever the table's size (bench/results/state-memory.json:
 * at most 233 MiB with 1M rows per shard, 375 MiB with 2M), doubled for headroom, in 64 MB steps.
 */
export function shardMemoryMb(rowsPerShard: number): number {
  const peakMiB = 100 + SHARD_BYTES_PER_ROW * (rowsPerShard / 1_000_000);
  return Math.min(10_240, Math.ceil((2 * peakMiB) / 64) * 64);
}

/**
 * An output part's function (MB): Assemble and VerifySlice peak at about 100 MiB plus 240 MiB
 * per million rows of the part (bench/results/deployed.json: 574 and 486 MiB with 2M rows per
 * part), doubled for headroom, in 64 MB steps.
 */
export function partMemoryMb(rowsPerPart: number): number {
  const peakMiB = 100 + PART_BYTES_PER_ROW * (rowsPerPart / 1_000_000);
  return Math.min(10_240, Math.ceil((2 * peakMiB) / 64) * 64);
}

/** Memory (MB) of some states instead of their sizing (context ppdp:memoryMb). */
export type MemoryOverrides = Partial<Record<TaskName, number>>;

function sizing(rowsPerShard: number, overrides: MemoryOverrides = {}): Record<TaskName, Sizing> {
  const sized = sizingByRows(rowsPerShard);
  for (const [task, mb] of Object.entries(overrides) as [TaskName, number][]) {
    sized[task] = { ...sized[task], memory: mb };
  }
  return sized;
}

function sizingByRows(rowsPerShard: number): Record<TaskName, Sizing> {
  const shard: Sizing = { memory: shardMemoryMb(rowsPerShard), timeout: Duration.minutes(15), tmp: 1024 };
  // A verification slice is an input shard or an output part, whichever is larger.
  const part: Sizing = {
    memory: partMemoryMb(Math.max(DEFAULT_ROWS_PER_PART, rowsPerShard)),
    timeout: Duration.minutes(15),
    tmp: 2048,
  };
  return {
    // Plan copies the input's first file to /tmp for its checks; a scan copies its own file
    // there and reads it one shard at a time: the most ephemeral storage Lambda gives.
    Plan: { ...BIG, tmp: 10_240 },
    ScanPiece: { ...BIG, tmp: 10_240 },
    // Combine holds the input's distinct values (every piece's dictionaries, merged).
    Combine: BIG,
    CountShard: shard,
    Search: BIG,
    ApplyShard: shard,
    Assemble: part,
    VerifySlice: part,
    // The audit holds a few words a released row (its class, the unchanged columns' hashes).
    Audit: BIG,
    Build: BIG,
    Verify: BIG,
    // Publish copies the files from the work bucket into the release bucket server-side,
    // eight at a time, and reads each back through a streaming SHA-256: little memory, but
    // every released byte hashed, so a whole vCPU (1,769 MB) for the 500 parts of 10⁹ rows.
    Publish: { memory: 1792, timeout: Duration.minutes(15), tmp: 512 },
    ReportFailure: { memory: 256, timeout: Duration.minutes(1), tmp: 512 },
  };
}

/** A bucket a Task reads or writes, with the key its objects are encrypted with (if any). */
interface DataBucket {
  readonly bucket: s3.IBucket;
  readonly key?: kms.IKey;
}

/**
 * Each Task's policy statements (infra/stacks/access.ts) over the three buckets, and the
 * KMS use they need: Decrypt on the keys of the buckets it reads, GenerateDataKey on those
 * it writes.
 */
class BucketAccess {
  constructor(private readonly buckets: Record<Area, DataBucket>) {}

  /** Grants a role what ACCESS gives its Task. */
  grant(role: iam.IRole, access: Partial<Record<Area, KeyAccess>>): void {
    for (const [area, keys] of Object.entries(access) as [Area, KeyAccess][]) {
      const { bucket, key } = this.buckets[area];
      // ListBucket, so that a missing key answers 404 rather than 403 (what a head expects).
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['s3:ListBucket'],
          resources: [bucket.bucketArn],
          // The inbox may be a bucket of yours: ppdp lists only its inbox/.
          ...(area === 'inbox' ? { conditions: { StringLike: { 's3:prefix': ['inbox/*'] } } } : {}),
        }),
      );
      const objects = (action: string, patterns: readonly string[] | undefined) => {
        if (patterns?.length)
          role.addToPrincipalPolicy(
            new iam.PolicyStatement({
              actions: [action],
              resources: patterns.map((p) => bucket.arnForObjects(p)),
            }),
          );
      };
      objects('s3:GetObject', keys.read);
      objects('s3:PutObject', keys.write);
      objects('s3:DeleteObject', keys.delete);
      const kmsActions = [
        ...(keys.read?.length ? ['kms:Decrypt'] : []),
        ...(keys.write?.length ? ['kms:GenerateDataKey'] : []),
      ];
      if (key && kmsActions.length) key.grant(role, ...kmsActions);
    }
  }

  /** The object patterns of a bucket's ARN, as cdk-nag names them in findings. */
  static wildcards(stack: Stack, bucket: s3.IBucket, patterns: readonly string[]): Map<string, string> {
    return new Map(
      patterns
        .filter((p) => p.includes('*'))
        .map((p) => [flattenCfnReference(stack.resolve(bucket.arnForObjects(p))) as string, p]),
    );
  }
}

export class ReleaseStack extends Stack {
  /** Specs and inputs (`inbox/<name>/…`): the stack's own bucket, or an existing one. */
  readonly inbox: s3.IBucket;
  /** The runs' work areas (`work/<name>/<runId>/`), expiring after workRetentionDays. */
  readonly work: s3.Bucket;
  /** The published releases (`releases/<name>/<runId>/`). */
  readonly releases: s3.Bucket;
  /** Each bucket's KMS key (the inbox's only when it has one). */
  readonly keys: { readonly inbox?: kms.IKey; readonly work: kms.Key; readonly releases: kms.Key };
  readonly stateMachine: sfn.StateMachine;
  readonly functions: Record<TaskName, lambda.Function>;
  /** Failed, timed-out and aborted executions, and the alarms, are published here. */
  readonly failureTopic: sns.Topic;
  /** Starts an execution per run: what the spec's S3 event and the schedules invoke. */
  readonly startFunction: lambda.Function;
  private readonly access: BucketAccess;

  constructor(scope: Construct, id: string, props: ReleaseStackProps) {
    super(scope, id, props);
    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED, // the only encryption S3 server access logging writes to
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(365), noncurrentVersionExpiration: Duration.days(30) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const workDays = props.workRetentionDays ?? 1;
    const inbox = props.inputBucket
      ? this.existingInbox(props.inputBucket)
      : this.dataBucket('Inbox', 'specs and inputs', accessLogs, { eventBridgeEnabled: true });
    const work = this.dataBucket('Work', 'work files', accessLogs, {
      // No versions: a deleted or expired work file (a copy of the input's rows) is gone.
      versioned: false,
      lifecycleRules: [
        { expiration: Duration.days(workDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
    const releases = this.dataBucket('Releases', 'releases', accessLogs, {});
    this.inbox = inbox.bucket;
    this.work = work.bucket as s3.Bucket;
    this.releases = releases.bucket as s3.Bucket;
    this.keys = { inbox: inbox.key, work: work.key as kms.Key, releases: releases.key as kms.Key };
    this.access = new BucketAccess({ inbox, work, releases });
    this.functions = this.stateFunctions(props);
    this.stateMachine = this.releaseMachine(props.mapConcurrency ?? 100);
    this.startFunction = this.buildStart(props.handlersDir);
    const deadLetters = this.starts(props.schedules ?? [], this.startFunction);
    this.failureTopic = this.alerts(deadLetters, props.alertEmail);
    new CfnOutput(this, 'InboxBucketName', { value: this.inbox.bucketName });
    new CfnOutput(this, 'WorkBucketName', { value: this.work.bucketName });
    new CfnOutput(this, 'ReleaseBucketName', { value: this.releases.bucketName });
    new CfnOutput(this, 'StateMachineArn', { value: this.stateMachine.stateMachineArn });
  }

  /**
   * A bucket under its own KMS key (rotation on, S3 bucket key), public access blocked, TLS
   * only, access-logged, versioned unless said otherwise (noncurrent versions kept 30 days).
   */
  private dataBucket(
    id: string,
    holds: string,
    accessLogs: s3.Bucket,
    options: Pick<s3.BucketProps, 'versioned' | 'lifecycleRules' | 'eventBridgeEnabled'>,
  ): DataBucket {
    const key = new kms.Key(this, `${id}Key`, {
      description: `ppdp: ${holds}`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const versioned = options.versioned ?? true;
    const bucket = new s3.Bucket(this, id, {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: key,
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: `${id.toLowerCase()}/`,
      lifecycleRules: versioned ? [{ noncurrentVersionExpiration: Duration.days(30) }] : undefined,
      removalPolicy: RemovalPolicy.RETAIN,
      ...options,
      versioned,
    });
    return { bucket, key };
  }

  /** An existing input bucket: EventBridge notifications turned on, its key if it has one. */
  private existingInbox(input: InputBucket): DataBucket {
    const bucket = s3.Bucket.fromBucketName(this, 'Inbox', input.name);
    // Adds EventBridge to the bucket's notifications, keeping the ones it has.
    bucket.enableEventBridgeNotification();
    return { bucket, key: input.keyArn ? kms.Key.fromKeyArn(this, 'InboxKey', input.keyArn) : undefined };
  }

  /** One function per Task, each with its own role: read what it reads, write what it writes. */
  private stateFunctions(props: ReleaseStackProps): Record<TaskName, lambda.Function> {
    const fns = {} as Record<TaskName, lambda.Function>;
    const rowsPerShard = props.rowsPerShard ?? 1_000_000;
    const sizes = sizing(rowsPerShard, props.memoryMb);
    // Plan admits a release against the memory of the states that grow with the input.
    const stateMemory = JSON.stringify(Object.fromEntries(TASKS.map((t) => [t, sizes[t].memory])));
    for (const task of TASKS) {
      const logGroup = new logs.LogGroup(this, `${task}Logs`, {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const role = new iam.Role(this, `${task}Role`, {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description: `ppdp ${task}: only the keys its state reads and writes`,
      });
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [logGroup.logGroupArn, `${logGroup.logGroupArn}:*`],
        }),
      );
      this.access.grant(role, ACCESS[task]);
      const size = sizes[task];
      fns[task] = new lambda.Function(this, task, {
        description: `ppdp release state ${task}`,
        runtime: lambda.Runtime.NODEJS_22_X,
        architecture: lambda.Architecture.ARM_64,
        code: lambda.Code.fromAsset(props.handlersDir),
        handler: `${HANDLER_FILES[task]}.handler`,
        memorySize: size.memory,
        timeout: size.timeout,
        ephemeralStorageSize: Size.mebibytes(size.tmp),
        tracing: lambda.Tracing.ACTIVE,
        role,
        logGroup,
        loggingFormat: lambda.LoggingFormat.JSON,
        environment: {
          PPDP_ROWS_PER_SHARD: String(rowsPerShard),
          PPDP_RUN_LOCK: 'on', // Plan refuses a second execution of a run already under way
          [STATE_MEMORY_ENV]: stateMemory,
          // Where Plan puts the work area and the release (the spec stays in the inbox).
          [ROOT_ENV.work]: `s3://${this.work.bucketName}/`,
          [ROOT_ENV.releases]: `s3://${this.releases.bucketName}/`,
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'ppdp',
          POWERTOOLS_METRICS_NAMESPACE: 'ppdp',
        },
      });
    }
    for (const task of TASKS) {
      const role = fns[task].role!;
      this.acknowledgeLogsAndTraces(role, this.node.findChild(`${task}Logs`) as logs.LogGroup);
      this.acknowledgeKeys(role, ACCESS[task]);
      this.acknowledgeFinding(
        fns[task],
        'AwsSolutions-L1',
        'nodejs22.x is the newest runtime ppdp is tested on (the code also runs on Node 20)',
      );
    }

    return fns;
  }

  /** The state machine: the same definition the local engine runs, with its role and logs. */
  private releaseMachine(mapConcurrency: number): sfn.StateMachine {
    const stateMachineName = `${this.stackName}-release`;
    const stateMachineArn = Arn.format(
      {
        service: 'states',
        resource: 'stateMachine',
        resourceName: stateMachineName,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      this,
    );
    const executionArns = Arn.format(
      {
        service: 'states',
        resource: 'execution',
        resourceName: `${stateMachineName}/*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      this,
    );
    const smRole = new iam.Role(this, 'StateMachineRole', {
      assumedBy: new iam.ServicePrincipal('states.amazonaws.com'),
      description:
        'ppdp release state machine: invoke its functions, read shard lists, run its Distributed Maps',
    });
    for (const fn of Object.values(this.functions)) fn.grantInvoke(smRole);
    // The Distributed Maps' ItemReader reads the item lists Plan wrote, nothing else.
    this.access.grant(smRole, { work: { read: MAP_ITEMS } });
    smRole.addToPolicy(
      new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [stateMachineArn] }),
    );
    smRole.addToPolicy(
      // RedriveExecution: redriving a release redrives its Distributed Maps' failed children.
      new iam.PolicyStatement({
        actions: ['states:DescribeExecution', 'states:StopExecution', 'states:RedriveExecution'],
        resources: [executionArns],
      }),
    );
    for (const fn of Object.values(this.functions)) {
      this.acknowledge(
        smRole,
        `Resource::${this.logicalArn(fn)}:*`,
        "invoking any version of the state's own function (grantInvoke)",
      );
    }
    this.acknowledgeKeys(smRole, { work: { read: MAP_ITEMS } });
    this.acknowledge(
      smRole,
      `Resource::${executionArns}`,
      'Distributed Map child executions of this state machine',
    );
    this.acknowledge(
      smRole,
      'Resource::*',
      'X-Ray tracing and CloudWatch Logs delivery (CreateLogDelivery etc.) take no resource',
    );
    const definition = releaseDefinition({
      resource: (task) => `\${${placeholder(task)}}`,
      mapConcurrency,
      caught: RELEASE_ERRORS,
    });
    const smLogs = new logs.LogGroup(this, 'StateMachineLogs', {
      logGroupName: `/aws/vendedlogs/states/${stateMachineName}`,
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    return new sfn.StateMachine(this, 'Release', {
      stateMachineName,
      definitionBody: sfn.DefinitionBody.fromString(JSON.stringify(definition)),
      definitionSubstitutions: Object.fromEntries(
        TASKS.map((t) => [placeholder(t), this.functions[t].functionArn]),
      ),
      role: smRole,
      stateMachineType: sfn.StateMachineType.STANDARD,
      // No execution data in the logs: payloads carry locations only, but errors may name values.
      logs: { destination: smLogs, level: sfn.LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
      timeout: Duration.hours(12),
    });
  }

  /**
   * What starts a release: a spec dropped at inbox/<name>/release.json, and the schedules. Both
   * call the Start function, which names the execution after the run (one execution per run,
   * src/pipeline/start.ts). Returns the dead-letter queue of starts that failed.
   */
  private starts(schedules: readonly ScheduledRelease[], start: lambda.Function): sqs.Queue {
    // A spec dropped at inbox/<name>/release.json starts a release.
    const deadLetters = new sqs.Queue(this, 'StartFailures', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.acknowledgeFinding(
      deadLetters,
      'AwsSolutions-SQS3',
      'this queue is itself the dead-letter queue of the rule and the schedules',
    );
    // The rule and the schedules invoke Start asynchronously: a Start that fails (after
    // Lambda's own 2 retries) lands in the same queue as an undelivered event, and alarms.
    start.configureAsyncInvoke({
      onFailure: new destinations.SqsDestination(deadLetters),
      retryAttempts: 2,
      maxEventAge: Duration.hours(2),
    });
    new events.Rule(this, 'OnSpec', {
      description: 'ppdp: start a release when inbox/<name>/release.json is written',
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: {
          bucket: { name: [this.inbox.bucketName] },
          object: { key: events.Match.wildcard('inbox/*/release.json') },
        },
      },
      targets: [
        new targets.LambdaFunction(start, {
          event: events.RuleTargetInput.fromObject({
            spec: `s3://${events.EventField.fromPath('$.detail.bucket.name')}/${events.EventField.fromPath('$.detail.object.key')}`,
          }),
          deadLetterQueue: deadLetters,
          retryAttempts: 4,
          maxEventAge: Duration.hours(2),
        }),
      ],
    });

    // Recurring releases: the spec in the inbox, re-run on a schedule (a schedule that fires
    // while its run is going, or over unchanged files, starts nothing: see Start).
    const invoker = schedules.length === 0 ? undefined : this.scheduleRole(start);
    for (const s of schedules) {
      new scheduler.Schedule(this, `Schedule-${s.name}`, {
        description: `ppdp: recurring release of inbox/${s.name}/release.json`,
        schedule: scheduler.ScheduleExpression.expression(
          s.expression,
          s.timeZone ? TimeZone.of(s.timeZone) : undefined,
        ),
        target: new schedulerTargets.LambdaInvoke(start, {
          role: invoker,
          input: scheduler.ScheduleTargetInput.fromObject({
            spec: `s3://${this.inbox.bucketName}/inbox/${s.name}/release.json`,
          }),
          deadLetterQueue: deadLetters,
          retryAttempts: 4,
        }),
      });
    }

    // EventBridge notifications on the inbox add CDK's bucket-notifications custom resource.
    const notifications = this.node.tryFindChild(
      'BucketNotificationsHandler050a0587b7544547bf325f094a3db834',
    );
    if (notifications) {
      this.acknowledgeFinding(
        notifications,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        "CDK's own custom resource that turns on EventBridge notifications for the bucket; it runs only at deploy time",
      );
    }

    return deadLetters;
  }

  /** The role the schedules invoke Start with (EventBridge Scheduler of this account only). */
  private scheduleRole(start: lambda.Function): iam.Role {
    const role = new iam.Role(this, 'ScheduleRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': this.account } },
      }),
      description: 'ppdp schedules: invoke the Start function',
    });
    start.grantInvoke(role);
    this.acknowledge(
      role,
      `Resource::${this.logicalArn(start)}:*`,
      'invoking any version of the Start function (grantInvoke)',
    );
    return role;
  }

  /**
   * The Start function: reads the spec and the input from the inbox (to name the execution
   * after the run), starts, describes and redrives executions of this state machine only.
   */
  private buildStart(handlersDir: string): lambda.Function {
    const logGroup = new logs.LogGroup(this, 'StartLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = new iam.Role(this, 'StartRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: "ppdp Start: read the inbox, start or redrive this stack's release executions",
    });
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [logGroup.logGroupArn, `${logGroup.logGroupArn}:*`],
      }),
    );
    // The spec and the input, to compute the run id the execution is named after.
    const reads: Partial<Record<Area, KeyAccess>> = { inbox: { read: ['inbox/*'] } };
    this.access.grant(role, reads);
    const executions = Arn.format(
      {
        service: 'states',
        resource: 'execution',
        // The machine's name as releaseMachine gives it (a plain string, unlike its token).
        resourceName: `${this.stackName}-release:*`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      },
      this,
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['states:StartExecution'],
        resources: [this.stateMachine.stateMachineArn],
      }),
    );
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['states:DescribeExecution', 'states:RedriveExecution'],
        resources: [executions],
      }),
    );
    const fn = new lambda.Function(this, 'Start', {
      description: 'ppdp: start a release, one execution per run',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      code: lambda.Code.fromAsset(handlersDir),
      handler: `${HANDLER_FILES.Start}.handler`,
      memorySize: START.memory,
      timeout: START.timeout,
      ephemeralStorageSize: Size.mebibytes(START.tmp),
      tracing: lambda.Tracing.ACTIVE,
      role,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: {
        PPDP_STATE_MACHINE_ARN: this.stateMachine.stateMachineArn, // start.ts STATE_MACHINE_ENV
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'ppdp',
        POWERTOOLS_METRICS_NAMESPACE: 'ppdp',
      },
    });
    this.acknowledgeLogsAndTraces(role, logGroup);
    this.acknowledgeKeys(role, reads);
    this.acknowledge(
      role,
      `Resource::${executions}`,
      "this state machine's executions: their names are the releases' runs, not known in advance",
    );
    this.acknowledgeFinding(
      fn,
      'AwsSolutions-L1',
      'nodejs22.x is the newest runtime ppdp is tested on (the code also runs on Node 20)',
    );
    return fn;
  }

  /**
   * The failure topic (its own KMS key, TLS only) and what publishes to it: a rule on this
   * state machine's FAILED, TIMED_OUT and ABORTED executions (one message per execution) and
   * alarms on failed or timed-out executions and on starts that reached the dead-letter queue.
   */
  private alerts(deadLetters: sqs.Queue, email: string | undefined): sns.Topic {
    const key = new kms.Key(this, 'AlertKey', {
      description: 'ppdp: the failure topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // EventBridge and CloudWatch alarms publish to the encrypted topic with this key.
    for (const service of ['events.amazonaws.com', 'cloudwatch.amazonaws.com'])
      key.grant(new iam.ServicePrincipal(service), 'kms:Decrypt', 'kms:GenerateDataKey*');
    const topic = new sns.Topic(this, 'Failures', {
      displayName: 'ppdp release failures',
      masterKey: key,
      enforceSSL: true,
    });
    if (email) topic.addSubscription(new subscriptions.EmailSubscription(email));
    // The topic's own policy replaces the default one: let this account's alarms publish.
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': this.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
          StringEquals: { 'aws:SourceAccount': this.account },
        },
      }),
    );

    const field = (path: string) => events.EventField.fromPath(path);
    new events.Rule(this, 'OnFailure', {
      description: 'ppdp: a release execution failed, timed out or was aborted',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: {
          status: ['FAILED', 'TIMED_OUT', 'ABORTED'],
          stateMachineArn: [this.stateMachine.stateMachineArn],
        },
      },
      // Names and locations only: an error's cause may name a value, so it stays in error.json.
      targets: [
        new targets.SnsTopic(topic, {
          message: events.RuleTargetInput.fromObject({
            release: 'ppdp release execution stopped',
            status: field('$.detail.status'),
            execution: field('$.detail.executionArn'),
            input: field('$.detail.input'),
            stopped: field('$.detail.stopDate'),
            next: 'read releases/<name>/error.json; redrive the execution once the cause is fixed (docs/deploy.md, Operations)',
          }),
        }),
        // Failures the definition does not catch (so they can be redriven) get their error.json
        // here; ReportFailure skips executions its own Catch path already reported.
        new targets.LambdaFunction(this.functions.ReportFailure, {
          deadLetterQueue: deadLetters,
          retryAttempts: 4,
          maxEventAge: Duration.hours(2),
        }),
      ],
    });

    const alarm = (id: string, metric: cloudwatch.IMetric, description: string) => {
      const a = new cloudwatch.Alarm(this, id, {
        metric,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      a.addAlarmAction(new cloudwatchActions.SnsAction(topic));
    };
    const period = Duration.minutes(5);
    alarm(
      'StartFailuresAlarm',
      deadLetters.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      'ppdp: a release could not be started (the start event is in the StartFailures queue)',
    );
    alarm(
      'ExecutionsFailedAlarm',
      this.stateMachine.metricFailed({ period, statistic: 'Sum' }),
      'ppdp: a release execution failed',
    );
    alarm(
      'ExecutionsTimedOutAlarm',
      this.stateMachine.metricTimedOut({ period, statistic: 'Sum' }),
      'ppdp: a release execution timed out',
    );
    new CfnOutput(this, 'FailureTopicArn', { value: topic.topicArn });
    return topic;
  }

  /** Each object pattern of a role's access acknowledged as a wildcard, with its reason. */
  private acknowledgeKeys(role: iam.IRole, access: Partial<Record<Area, KeyAccess>>): void {
    const buckets = { inbox: this.inbox, work: this.work, releases: this.releases };
    for (const [area, keys] of Object.entries(access) as [Area, KeyAccess][]) {
      const patterns = [...new Set([...(keys.read ?? []), ...(keys.write ?? []), ...(keys.delete ?? [])])];
      for (const [finding, pattern] of BucketAccess.wildcards(this, buckets[area], patterns))
        this.acknowledge(role, `Resource::${finding}`, wildcardReason(pattern));
    }
  }

  /** The findings every function's role has: its own log streams, and X-Ray. */
  private acknowledgeLogsAndTraces(role: iam.IRole, logGroup: logs.LogGroup): void {
    this.acknowledge(
      role,
      `Resource::${this.logicalArn(logGroup)}:*`,
      "log streams of this function's own log group: their names are not known in advance",
    );
    this.acknowledge(
      role,
      'Resource::*',
      'X-Ray PutTraceSegments/PutTelemetryRecords take no resource (active tracing)',
    );
  }

  /** A construct's ARN as cdk-nag names it in findings. */
  private logicalArn(c: IConstruct): string {
    return `<${this.getLogicalId(c.node.defaultChild as CfnResource)}.Arn>`;
  }

  /** A cdk-nag AwsSolutions-IAM5 finding acknowledged with its reason. */
  private acknowledge(scope: IConstruct, finding: string, reason: string): void {
    this.acknowledgeFinding(scope, `AwsSolutions-IAM5[${finding}]`, reason);
  }

  private acknowledgeFinding(scope: IConstruct, id: string, reason: string): void {
    Validations.of(scope).acknowledge({ id: `AwsSolutions::${id}`, reason });
  }
}
