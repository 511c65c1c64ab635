/**
 * The release state machine (Amazon States Language, JSONPath), built once in code and run
 * by both engines: Step Functions in AWS (CDK substitutes the Lambda ARNs and keeps the
 * Distributed Maps) and aws-local-stepfunctions here (`localDefinition` rewrites each
 * Distributed Map into an inline Map fed by a lister Task, and every Task is bound to its
 * handler in-process by state name).
 *
 *   Plan → Scan (map: ScanPiece, over the input's files) → Combine → Route ─┐
 *     ┌───────────────────────────────────────────────────────────────────────┘
 *     ├─ sharded → Count (map: CountShard) → Searching (parallel) → Release (parallel) ────┐
 *     │   Searching: Search │ CountDistinct │ RouteBytes (map: RouteShard, when the release
 *     │                     carries columns as their rows' bytes) → HashBytes (map: VerifySlice)
 *     │   Release:                                                                        │
 *     │     ├─ Apply (map: ApplyShard) → Parts (map: Assemble) → CheckParts (parallel) ──┐   │
 *     │     │     ├─ VerifyParts (map: VerifySlice, over output parts)                   │   │
 *     │     │     └─ Audit ─────────────────────────────────────────────────────────────┘   │
 *     │     └─ CheckShards (map: VerifySlice, over input shards)                             │
 *     └─ single  → Build ────────────────────────────────────────────────────────────────────┴→ Verify → Publish
 *   any failure → ReportFailure → Failed   (writes releases/<name>/error.json; publishes nothing)
 *   (deployed, only ppdp's own refusals take that path: see `caught`)
 *
 * The input shards' slices of the verification need only the search's answer: they run beside
 * the apply and assemble maps rather than after them (on one machine they fill the workers'
 * idle time; deployed they finish while the parts are written). The audit of the release
 * (what it may give away beyond its models) needs only the staged parts: it runs beside the
 * parts' slices rather than inside Verify; its first phase (CountDistinct: the distinct values
 * of the columns passed through as bytes, over the input's pieces) needs no node and runs
 * beside the search, which every other state waits on. So does ApplyShard's first phase
 * (RouteShard): the columns passed through as bytes split by output part, every row, for
 * Assemble to gather the released ones (states/route.ts); and the hashes of those columns'
 * rows that the input shards' slices of the verification compare (HashShard, a VerifySlice).
 *
 * Plan is given the execution's name (`$$.Execution.Name`) with the request: its locks name
 * the execution, so that a retried or redriven Plan takes its own locks back (lock.ts).
 */

/** The Tasks, each a Lambda function in AWS and an in-process handler locally. */
export const TASKS = [
  'Plan',
  'ScanPiece',
  'Combine',
  'CountShard',
  'Search',
  'ApplyShard',
  'Assemble',
  'VerifySlice',
  'Audit',
  'Build',
  'Verify',
  'Publish',
  'ReportFailure',
] as const;
export type TaskName = (typeof TASKS)[number];

/**
 * Task states named apart from their function: a state's name is unique in a state machine,
 * and three maps run VerifySlice (over the output parts, over the input shards, over their
 * bytes beside the search); ApplyShard runs
 * a first phase beside the search (RouteShard), as Audit does (CountDistinct). Every other Task
 * state is named after its function.
 */
export const STATE_TASKS: Readonly<Record<string, TaskName>> = {
  VerifyPart: 'VerifySlice',
  VerifyShard: 'VerifySlice',
  HashShard: 'VerifySlice',
  CountDistinct: 'Audit',
  RouteShard: 'ApplyShard',
};

/** The function a Task state runs. */
export function taskOf(state: string): string {
  return STATE_TASKS[state] ?? state;
}

/** Errors worth retrying soon and often: Lambda's own transient failures and an unreachable store. */
export const TRANSIENT_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
  'StoreUnavailableError',
];

/**
 * ppdp's own refusals (bad spec or input, no solution, verification failed, store refused, a
 * kernel's refusal):
 * running the same input again fails the same way, so they go to ReportFailure (error.json).
 */
export const RELEASE_ERRORS = [
  'PpdpError',
  'SpecError',
  'InputError',
  'HierarchyError',
  'NoSolutionError',
  'VerificationError',
  'OutputError',
  'LimitError',
  'StoreError',
  'KernelError',
];

/**
 * A state that crashed or ran out of time (a killed or out-of-memory function, a timeout, a
 * failure of the Task that is not ppdp's own: `States.TaskFailed` matches any Task error the
 * retriers before it did not): retried twice, with backoff, as the machine may have been at
 * fault. Deployed, once the retries are spent the execution stops at that state (not caught:
 * a redrive resumes there) and the execution-status rule has ReportFailure write error.json.
 */
export const CRASH_ERRORS = [
  'Runtime.ExitError',
  'Runtime.OutOfMemory',
  'Sandbox.Timedout',
  'Lambda.Unknown',
  'States.Timeout',
  'States.TaskFailed',
];

/** The refusal of a duplicate start (lock.ts): never retried, never on the failure path. */
export const DUPLICATE_ERROR = 'RunUnderWayError';

/** The error the failure path ends with (its Fail state), error.json written by then. */
export const REPORTED_FAILURE = 'ppdp.ReleaseFailed';

export interface DefinitionOptions {
  /** Resource of each Task: a Lambda ARN, or a `${Name}` placeholder for CloudFormation. */
  readonly resource: (task: TaskName) => string;
  /** Concurrent shard workers of each Distributed Map (default 100). */
  readonly mapConcurrency?: number;
  /** Per-Task timeout (default 900 s, Lambda's limit). */
  readonly taskTimeoutSeconds?: number;
  /**
   * Errors the failure path catches (default: every error). Deployed, only RELEASE_ERRORS:
   * anything else (a crash, a timeout, out of memory, once CRASH_ERRORS' retries are spent; a
   * failed shard; a duplicate start) stops the execution at the failing state, where
   * RedriveExecution resumes it (a redrive of an execution that ended in the Fail state would
   * only fail again), and the execution-status rule reports it.
   */
  readonly caught?: readonly string[];
}

// biome-ignore lint/suspicious/noExplicitAny: ASL is plain JSON
export type AslState = Record<string, any>;
export interface AslDefinition {
  readonly Comment?: string;
  readonly StartAt: string;
  readonly States: Record<string, AslState>;
  readonly TimeoutSeconds?: number;
}

/** The `${Name}` placeholder CDK substitutes with a Task's function ARN. */
export function placeholder(task: TaskName): string {
  return `${task}FunctionArn`;
}

export function releaseDefinition(options: DefinitionOptions): AslDefinition {
  const timeout = options.taskTimeoutSeconds ?? 900;
  // The first retrier that names an error decides: ppdp's own refusals fail the same way
  // again, so they come first, with no retry (States.TaskFailed would match them too).
  const retry = [
    { ErrorEquals: [...RELEASE_ERRORS, DUPLICATE_ERROR], MaxAttempts: 0 },
    {
      ErrorEquals: TRANSIENT_ERRORS,
      IntervalSeconds: 2,
      MaxAttempts: 3,
      BackoffRate: 2,
      JitterStrategy: 'FULL',
    },
    {
      ErrorEquals: CRASH_ERRORS,
      IntervalSeconds: 10,
      MaxAttempts: 2,
      BackoffRate: 3,
      JitterStrategy: 'FULL',
    },
  ];
  const caught = options.caught ? [...options.caught] : ['States.ALL'];
  const toFailure = [{ ErrorEquals: caught, ResultPath: '$.error', Next: 'ReportFailure' }];
  const task = (name: TaskName, rest: AslState): AslState => ({
    Type: 'Task',
    Resource: options.resource(name),
    TimeoutSeconds: timeout,
    Retry: retry,
    ...rest,
  });
  const work = { 'work.$': '$.plan.work' };
  // A map on its own: its failures caught here; a map in a Parallel's branch: by the Parallel.
  const caughtThen = (next: string, st: AslState): AslState => ({ ...st, Catch: toFailure, Next: next });
  const shardMap = (
    worker: TaskName,
    items = 'items',
    selector: AslState = {},
    state: string = worker,
  ): AslState => ({
    Type: 'Map',
    ItemReader: {
      Resource: 'arn:aws:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSON' },
      Parameters: { 'Bucket.$': `$.plan.${items}.bucket`, 'Key.$': `$.plan.${items}.key` },
    },
    ItemSelector: { 'work.$': '$.plan.work', 'index.$': '$$.Map.Item.Value.index', ...selector },
    ItemProcessor: {
      ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' },
      StartAt: state,
      States: { [state]: task(worker, { ResultPath: null, End: true }) },
    },
    MaxConcurrency: options.mapConcurrency ?? 100,
    ToleratedFailurePercentage: 0,
    ResultPath: null,
  });
  const then = (next: string, st: AslState): AslState => ({ ...st, Next: next });
  const end = (st: AslState): AslState => ({ ...st, End: true });
  return {
    Comment: 'ppdp release: plan, fan out over row shards, merge, verify, publish (manifest last)',
    StartAt: 'Plan',
    States: {
      Plan: task('Plan', {
        Parameters: { 'request.$': '$', 'execution.$': '$$.Execution.Name' },
        ResultPath: '$.plan',
        Catch: toFailure,
        Next: 'Scan',
      }),
      Scan: caughtThen('Combine', shardMap('ScanPiece', 'pieceItems')),
      // Combine's answer completes Plan's (rows, shards, parts): it replaces it.
      Combine: task('Combine', { Parameters: work, ResultPath: '$.plan', Catch: toFailure, Next: 'Route' }),
      Route: {
        Type: 'Choice',
        Choices: [{ Variable: '$.plan.mode', StringEquals: 'single', Next: 'Build' }],
        Default: 'Count',
      },
      Count: caughtThen('Searching', shardMap('CountShard')),
      // The audit's count of the distinct values passed through as bytes needs no node: it runs
      // beside the search (its first phase), which has every other state waiting on it.
      Searching: caughtThen('Release', {
        Type: 'Parallel',
        Branches: [
          { StartAt: 'Search', States: { Search: task('Search', { Parameters: work, End: true }) } },
          {
            StartAt: 'CountDistinct',
            States: {
              CountDistinct: task('Audit', {
                Parameters: { ...work, phase: 'distinct' },
                ResultPath: null,
                End: true,
              }),
            },
          },
          // The columns released as their bytes need no node either: split by output part here,
          // all rows, for Assemble to gather the ones the release keeps; then their rows' hashes,
          // for the input shards' slices of the verification.
          {
            StartAt: 'PassesBytes',
            States: {
              PassesBytes: {
                Type: 'Choice',
                Choices: [{ Variable: '$.plan.routesBytes', BooleanEquals: true, Next: 'RouteBytes' }],
                Default: 'NoBytes',
              },
              NoBytes: { Type: 'Pass', End: true },
              RouteBytes: then(
                'HashBytes',
                shardMap('ApplyShard', 'items', { phase: 'route' }, 'RouteShard'),
              ),
              HashBytes: end(shardMap('VerifySlice', 'items', { kind: 'bytes' }, 'HashShard')),
            },
          },
        ],
        ResultSelector: { 'node.$': '$[0].node' },
        ResultPath: '$.search',
      }),
      Release: caughtThen('Verify', {
        Type: 'Parallel',
        Branches: [
          {
            StartAt: 'Apply',
            States: {
              Apply: then('Parts', shardMap('ApplyShard')),
              Parts: then('CheckParts', shardMap('Assemble', 'partItems')),
              // The audit reads only the staged parts: it runs beside their slices.
              CheckParts: end({
                Type: 'Parallel',
                Branches: [
                  {
                    StartAt: 'VerifyParts',
                    States: {
                      VerifyParts: end(shardMap('VerifySlice', 'partItems', { kind: 'part' }, 'VerifyPart')),
                    },
                  },
                  {
                    StartAt: 'Audit',
                    States: { Audit: task('Audit', { Parameters: work, ResultPath: null, End: true }) },
                  },
                ],
                ResultPath: null,
              }),
            },
          },
          {
            StartAt: 'CheckShards',
            States: { CheckShards: end(shardMap('VerifySlice', 'items', { kind: 'shard' }, 'VerifyShard')) },
          },
        ],
        ResultPath: null,
      }),
      Build: task('Build', { Parameters: work, ResultPath: null, Catch: toFailure, Next: 'Verify' }),
      Verify: task('Verify', {
        Parameters: work,
        ResultPath: '$.verified',
        Catch: toFailure,
        Next: 'Publish',
      }),
      Publish: task('Publish', {
        Parameters: { 'work.$': '$.plan.work', 'release.$': '$.plan.release' },
        ResultPath: '$.published',
        Catch: toFailure,
        End: true,
      }),
      ReportFailure: task('ReportFailure', { ResultPath: null, Next: 'Failed' }),
      Failed: {
        Type: 'Fail',
        Error: REPORTED_FAILURE,
        Cause: 'the release failed and nothing was published; see releases/<name>/error.json',
      },
    },
  };
}

/** The lister Task that feeds a rewritten Map locally, by Map name. */
export function listerName(mapName: string): string {
  return `List${mapName}Items`;
}

/** A state machine or a Parallel state's branch: states and where they start. */
interface StateGraph {
  readonly StartAt: string;
  readonly States: Record<string, AslState>;
}

const isDistributed = (st: AslState): boolean =>
  st.Type === 'Map' && st.ItemProcessor?.ProcessorConfig?.Mode === 'DISTRIBUTED';

/** The Distributed Maps of a definition, its Parallel states' branches included, by name. */
export function distributedMaps(def: StateGraph): string[] {
  return Object.entries(def.States).flatMap(([name, st]) => [
    ...(isDistributed(st) ? [name] : []),
    ...((st.Branches ?? []) as StateGraph[]).flatMap(distributedMaps),
  ]);
}

/**
 * The same definition for aws-local-stepfunctions, which cannot run Distributed Maps: each
 * becomes a lister Task (reading the items the ItemReader would read) followed by an inline
 * Map over them, in a Parallel state's branches too. Everything else is kept as it is.
 */
export function localDefinition(def: AslDefinition, mapConcurrency = 4): AslDefinition {
  return { ...def, ...localGraph(def, mapConcurrency) };
}

function localGraph(def: StateGraph, mapConcurrency: number): StateGraph {
  const distributed = new Set(
    Object.entries(def.States)
      .filter(([, st]) => isDistributed(st))
      .map(([name]) => name),
  );
  const to = (next: string | undefined) => (next && distributed.has(next) ? listerName(next) : next);
  const redirect = (st: AslState): AslState => ({
    ...st,
    ...(st.Next ? { Next: to(st.Next) } : {}),
    ...(st.Default ? { Default: to(st.Default) } : {}),
    ...(st.Choices ? { Choices: st.Choices.map((c: AslState) => ({ ...c, Next: to(c.Next) })) } : {}),
    ...(st.Catch ? { Catch: st.Catch.map((c: AslState) => ({ ...c, Next: to(c.Next) })) } : {}),
    ...(st.Branches ? { Branches: st.Branches.map((b: StateGraph) => localGraph(b, mapConcurrency)) } : {}),
  });
  const states: Record<string, AslState> = {};
  for (const [name, state] of Object.entries(def.States)) {
    if (!distributed.has(name)) {
      states[name] = redirect(state);
      continue;
    }
    const { ItemReader, ItemProcessor, ToleratedFailurePercentage: _t, ...map } = redirect(state);
    const { ProcessorConfig: _p, ...processor } = ItemProcessor;
    states[listerName(name)] = {
      Type: 'Task',
      Resource: ItemReader.Resource,
      Parameters: ItemReader.Parameters,
      TimeoutSeconds: 60,
      ResultPath: '$.mapItems',
      ...(map.Catch ? { Catch: map.Catch } : {}),
      Next: name,
    };
    states[name] = {
      ...map,
      ItemsPath: '$.mapItems',
      ItemProcessor: processor,
      MaxConcurrency: mapConcurrency,
    };
  }
  return { StartAt: to(def.StartAt)!, States: states };
}
