/**
 * ppdp in an AWS account: one bucket (inbox/ → work/ → releases/), the release state machine
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
import type { Construct, IConstruct } from 'constructs';
import {
  placeholder,
  RELEASE_ERRORS,
  releaseDefinition,
  TASKS,
  type TaskName,
} from '../../src/pipeline/definition.ts';
import { LOCK } from '../../src/pipeline/publish.ts';
import { DEFAULT_ROWS_PER_PART } from '../../src/pipeline/states/types.ts';

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
  /** Days work files are kept (default 14). */
  readonly workRetentionDays?: number;
  /** An email address subscribed to the failure topic. */
  readonly alertEmail?: string;
}

/** The handler file of each Task, and of Start (functions/<file>.ts). */
export const HANDLER_FILES: Record<TaskName | 'Start', string> = {
  Start: 'start',
  Plan: 'plan',
  CountShard: 'count-shard',
  Search: 'search',
  ApplyShard: 'apply-shard',
  Assemble: 'assemble',
  VerifySlice: 'verify-slice',
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
  const peakMiB = 100 + 150 * (rowsPerShard / 1_000_000);
  return Math.min(10_240, Math.ceil((2 * peakMiB) / 64) * 64);
}

/**
 * An output part's function (MB): Assemble and VerifySlice peak at about 100 MiB plus 240 MiB
 * per million rows of the part (bench/results/deployed.json: 574 and 486 MiB with 2M rows per
 * part), doubled for headroom, in 64 MB steps.
 */
export function partMemoryMb(rowsPerPart: number): number {
  const peakMiB = 100 + 240 * (rowsPerPart / 1_000_000);
  return Math.min(10_240, Math.ceil((2 * peakMiB) / 64) * 64);
}

function sizing(rowsPerShard: number): Record<TaskName, Sizing> {
  const shard: Sizing = { memory: shardMemoryMb(rowsPerShard), timeout: Duration.minutes(15), tmp: 1024 };
  // A verification slice is an input shard or an output part, whichever is larger.
  const part: Sizing = {
    memory: partMemoryMb(Math.max(DEFAULT_ROWS_PER_PART, rowsPerShard)),
    timeout: Duration.minutes(15),
    tmp: 2048,
  };
  return {
    // Plan downloads the input to /tmp and streams it: the most ephemeral storage Lambda gives.
    Plan: { ...BIG, tmp: 10_240 },
    CountShard: shard,
    Search: BIG,
    ApplyShard: shard,
    Assemble: part,
    VerifySlice: part,
    Build: BIG,
    Verify: BIG,
    Publish: { memory: 512, timeout: Duration.minutes(5), tmp: 512 },
    ReportFailure: { memory: 256, timeout: Duration.minutes(1), tmp: 512 },
  };
}

/** The data bucket's policy statements, per Task: read what it reads, write what it writes. */
class BucketAccess {
  /**
   * A release folder's lock (src/pipeline/publish.ts): Plan takes it (after checking the
   * folder), Publish or ReportFailure gives it up. Only the lock's objects are written.
   */
  static readonly LOCKS = `releases/*/${LOCK}*`;
  /** Where ReportFailure records a failure for a release's users (src/pipeline/states/report-failure.ts). */
  static readonly FAILURES = 'releases/*/error.json';
  readonly lock: iam.PolicyStatement;
  private readonly byTask: Record<TaskName, iam.PolicyStatement[]>;

  constructor(private readonly bucket: s3.Bucket) {
    const { list, read, write } = this;
    this.lock = new iam.PolicyStatement({
      actions: ['s3:PutObject', 's3:DeleteObject'],
      resources: [bucket.arnForObjects(BucketAccess.LOCKS)],
    });
    const lock = this.lock;
    this.byTask = {
      Plan: [
        read('inbox/', 'releases/'),
        list('inbox/', 'work/', 'releases/'),
        read('work/'),
        write('work/'),
        lock,
      ],
      CountShard: [list('work/'), read('work/'), write('work/')],
      Search: [list('work/'), read('work/'), write('work/')],
      ApplyShard: [list('work/'), read('work/'), write('work/')],
      Assemble: [list('work/'), read('work/'), write('work/')],
      VerifySlice: [list('work/'), read('work/'), write('work/')],
      Build: [list('work/'), read('work/'), write('work/')],
      Verify: [list('work/'), read('work/'), write('work/')],
      Publish: [
        list('work/', 'releases/'),
        read('work/', 'releases/'),
        write('releases/'),
        new iam.PolicyStatement({ actions: ['s3:DeleteObject'], resources: [this.objects('releases/')] }),
      ],
      ReportFailure: [
        list('work/', 'releases/'),
        read('work/', 'releases/'),
        write('work/'),
        lock,
        new iam.PolicyStatement({
          actions: ['s3:PutObject'],
          resources: [bucket.arnForObjects(BucketAccess.FAILURES)],
        }),
      ],
    };
  }

  of(task: TaskName): iam.PolicyStatement[] {
    return this.byTask[task];
  }

  /** The bucket's ARN as cdk-nag names it in findings. */
  bucketArnToken(stack: Stack): string {
    return `<${stack.getLogicalId(this.bucket.node.defaultChild as CfnResource)}.Arn>`;
  }

  readonly list = (...prefixes: string[]) =>
    new iam.PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [this.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': prefixes.map((p) => `${p}*`) } },
    });

  readonly read = (...prefixes: string[]) =>
    new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: prefixes.map((p) => this.objects(p)) });

  readonly write = (...prefixes: string[]) =>
    new iam.PolicyStatement({ actions: ['s3:PutObject'], resources: prefixes.map((p) => this.objects(p)) });

  private objects(prefix: string): string {
    return this.bucket.arnForObjects(`${prefix}*`);
  }
}

export class ReleaseStack extends Stack {
  readonly bucket: s3.Bucket;
  readonly stateMachine: sfn.StateMachine;
  readonly functions: Record<TaskName, lambda.Function>;
  /** Failed, timed-out and aborted executions, and the alarms, are published here. */
  readonly failureTopic: sns.Topic;
  /** Starts an execution per run: what the spec's S3 event and the schedules invoke. */
  readonly startFunction: lambda.Function;

  constructor(scope: Construct, id: string, props: ReleaseStackProps) {
    super(scope, id, props);
    const key = new kms.Key(this, 'DataKey', {
      description: 'ppdp: inputs, work files and releases',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = this.dataBucket(key, props.workRetentionDays ?? 14);
    const access = new BucketAccess(this.bucket);
    this.functions = this.stateFunctions(key, access, props);
    this.stateMachine = this.releaseMachine(key, access, props.mapConcurrency ?? 100);
    this.startFunction = this.buildStart(key, access, props.handlersDir);
    const deadLetters = this.starts(props.schedules ?? [], this.startFunction);
    this.failureTopic = this.alerts(deadLetters, props.alertEmail);
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'StateMachineArn', { value: this.stateMachine.stateMachineArn });
  }

  /** The data bucket (KMS, versioned, TLS only, access-logged; work files expire). */
  private dataBucket(key: kms.Key, workRetentionDays: number): s3.Bucket {
    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED, // the only encryption S3 server access logging writes to
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(365), noncurrentVersionExpiration: Duration.days(30) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    return new s3.Bucket(this, 'Data', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: key,
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'data/',
      eventBridgeEnabled: true,
      lifecycleRules: [
        { prefix: 'work/', expiration: Duration.days(workRetentionDays) },
        { noncurrentVersionExpiration: Duration.days(30) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** One function per Task, each with its own role: read what it reads, write what it writes. */
  private stateFunctions(
    key: kms.Key,
    access: BucketAccess,
    props: ReleaseStackProps,
  ): Record<TaskName, lambda.Function> {
    const fns = {} as Record<TaskName, lambda.Function>;
    const rowsPerShard = props.rowsPerShard ?? 1_000_000;
    const sizes = sizing(rowsPerShard);
    for (const task of TASKS) {
      const logGroup = new logs.LogGroup(this, `${task}Logs`, {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const role = new iam.Role(this, `${task}Role`, {
        assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        description: `ppdp ${task}: least privilege on the data bucket`,
      });
      role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [logGroup.logGroupArn, `${logGroup.logGroupArn}:*`],
        }),
      );
      for (const statement of access.of(task)) role.addToPolicy(statement);
      key.grant(role, 'kms:Decrypt', 'kms:GenerateDataKey');
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
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'ppdp',
          POWERTOOLS_METRICS_NAMESPACE: 'ppdp',
        },
      });
    }
    const bucketArn = access.bucketArnToken(this);
    for (const task of TASKS) {
      const role = fns[task].role!;
      this.acknowledgeLogsAndTraces(role, this.node.findChild(`${task}Logs`) as logs.LogGroup);
      const prefixes = new Set(
        access
          .of(task)
          .flatMap((st) => st.resources)
          .filter(
            (r) => r.includes('/') && !r.endsWith(BucketAccess.LOCKS) && !r.endsWith(BucketAccess.FAILURES),
          )
          .map((r) => r.split('/').slice(-2, -1)[0]!),
      );
      if (access.of(task).includes(access.lock)) {
        this.acknowledge(
          role,
          `Resource::${bucketArn}/${BucketAccess.LOCKS}`,
          "release folders' locks only: keys depend on the release name and run id",
        );
      }
      if (task === 'ReportFailure') {
        this.acknowledge(
          role,
          `Resource::${bucketArn}/${BucketAccess.FAILURES}`,
          "a release's failure record only: its key depends on the release name",
        );
      }
      for (const prefix of prefixes) {
        this.acknowledge(
          role,
          `Resource::${bucketArn}/${prefix}/*`,
          `objects under ${prefix}/ only: keys depend on the release name and run id`,
        );
      }
      this.acknowledgeFinding(
        fns[task],
        'AwsSolutions-L1',
        'nodejs22.x is the newest runtime ppdp is tested on (the code also runs on Node 20)',
      );
    }

    return fns;
  }

  /** The state machine: the same definition the local engine runs, with its role and logs. */
  private releaseMachine(key: kms.Key, access: BucketAccess, mapConcurrency: number): sfn.StateMachine {
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
    smRole.addToPolicy(access.read('work/')); // the Distributed Maps' ItemReader reads shards.json
    key.grant(smRole, 'kms:Decrypt');
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
    this.acknowledge(
      smRole,
      `Resource::${access.bucketArnToken(this)}/work/*`,
      'the Distributed Maps read shards.json under work/<name>/<runId>/',
    );
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
          bucket: { name: [this.bucket.bucketName] },
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
            spec: `s3://${this.bucket.bucketName}/inbox/${s.name}/release.json`,
          }),
          deadLetterQueue: deadLetters,
          retryAttempts: 4,
        }),
      });
    }

    // eventBridgeEnabled adds CDK's bucket-notifications custom resource.
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
  private buildStart(key: kms.Key, access: BucketAccess, handlersDir: string): lambda.Function {
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
    role.addToPolicy(access.list('inbox/'));
    role.addToPolicy(access.read('inbox/'));
    key.grant(role, 'kms:Decrypt');
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
    this.acknowledge(
      role,
      `Resource::${access.bucketArnToken(this)}/inbox/*`,
      'specs and inputs under inbox/ only: keys depend on the release name',
    );
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
