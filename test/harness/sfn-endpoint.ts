/**
 * A local Step Functions endpoint for the deployed harness: AWS itself cannot run here, so this
 * HTTP server on 127.0.0.1 answers the AWS JSON 1.0 protocol (`X-Amz-Target:
 * AWSStepFunctions.<Op>`) for the three calls Start makes, as AWS answers them:
 * - StartExecution: execution names are unique per state machine: a name in use answers
 *   ExecutionAlreadyExists (400), except for a RUNNING execution started with the same input,
 *   which answers as its own start did (AWS's idempotent start);
 * - DescribeExecution: status, input, error and cause, dates, redrive count;
 * - RedriveExecution: only a FAILED, TIMED_OUT or ABORTED execution (else ExecutionNotRedrivable);
 *   a client token already used for that execution answers as before.
 * Each execution runs the synthesized state machine with `runDeployed` (every Task its bundled
 * handler in its own process), named as started (`$$.Execution.Name`). A redrive runs it again
 * from the start under the same name and input, where AWS resumes at the failed state and
 * keeps the results of the states before: every state before is run again too, which ppdp's
 * states must bear (same execution, same run: they rewrite the same files and take back their
 * own locks). An execution that ended in the Fail state (the failure path) fails there again,
 * as in AWS. When an execution stops unsuccessfully, `onStopped` gets the event the
 * execution-status rule would deliver (the stack's OnFailure rule invokes ReportFailure with it).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REPORTED_FAILURE } from '../../src/pipeline/definition.ts';
import type { ExecutionStatusEvent } from '../../src/pipeline/states/report-failure.ts';
import { type DeployedApp, type DeployedRun, type DeployedRunOptions, runDeployed } from './deployed.ts';

export const STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:111111111111:stateMachine:Ppdp-release';

export interface LocalExecution {
  readonly name: string;
  readonly arn: string;
  readonly input: string;
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED';
  readonly startDate: Date;
  stopDate?: Date;
  error?: string;
  cause?: string;
  redriveCount: number;
  readonly redriveTokens: Set<string>;
  /** Each run of the state machine: the first, then one per redrive. */
  readonly runs: DeployedRun[];
  /** Settles when the current run has ended. */
  done: Promise<void>;
}

type Answer = { status: number; body: Record<string, unknown> };

const fault = (type: string, message: string): Answer => ({ status: 400, body: { __type: type, message } });
const seconds = (d: Date | undefined) => (d ? d.getTime() / 1000 : undefined);

export class LocalStepFunctions {
  readonly executions = new Map<string, LocalExecution>();
  private server: Server | undefined;

  constructor(
    /** What runs: replace it to redeploy (e.g. a function's memory raised). */
    public deployed: DeployedApp,
    private readonly options: DeployedRunOptions & {
      readonly onStopped?: (event: ExecutionStatusEvent) => Promise<void>;
    },
  ) {}

  /** Listens on 127.0.0.1; resolves with the endpoint URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((ok) => this.server!.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Waits until no execution runs. */
  async settled(): Promise<void> {
    for (;;) {
      const running = [...this.executions.values()].filter((e) => e.status === 'RUNNING');
      if (running.length === 0) return;
      await Promise.all(running.map((e) => e.done));
    }
  }

  async close(): Promise<void> {
    await this.settled();
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let answer: Answer;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      const op = String(req.headers['x-amz-target'] ?? '').replace(/^AWSStepFunctions\./, '');
      answer =
        op === 'StartExecution'
          ? this.startExecution(body)
          : op === 'DescribeExecution'
            ? this.describeExecution(body)
            : op === 'RedriveExecution'
              ? this.redriveExecution(body)
              : fault('UnknownOperationException', `${op} is not served here`);
    } catch (e) {
      answer = fault('SerializationException', (e as Error).message);
    }
    res.writeHead(answer.status, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify(answer.body));
  }

  private startExecution(req: { stateMachineArn?: string; name?: string; input?: string }): Answer {
    if (req.stateMachineArn !== STATE_MACHINE_ARN)
      return fault('StateMachineDoesNotExist', `State Machine Does Not Exist: '${req.stateMachineArn}'`);
    const name = req.name ?? crypto.randomUUID();
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(name)) return fault('InvalidName', `Invalid Name: '${name}'`);
    const input = req.input ?? '{}';
    const found = this.executions.get(name);
    if (found) {
      if (found.status === 'RUNNING' && found.input === input)
        return { status: 200, body: { executionArn: found.arn, startDate: seconds(found.startDate) } };
      return fault('ExecutionAlreadyExists', `Execution Already Exists: '${found.arn}'`);
    }
    const execution: LocalExecution = {
      name,
      arn: `${STATE_MACHINE_ARN.replace(':stateMachine:', ':execution:')}:${name}`,
      input,
      status: 'RUNNING',
      startDate: new Date(),
      redriveCount: 0,
      redriveTokens: new Set(),
      runs: [],
      done: Promise.resolve(),
    };
    this.executions.set(name, execution);
    this.run(execution);
    return { status: 200, body: { executionArn: execution.arn, startDate: seconds(execution.startDate) } };
  }

  private find(arn: string | undefined): LocalExecution | undefined {
    return [...this.executions.values()].find((e) => e.arn === arn);
  }

  private describeExecution(req: { executionArn?: string }): Answer {
    const e = this.find(req.executionArn);
    if (!e) return fault('ExecutionDoesNotExist', `Execution Does Not Exist: '${req.executionArn}'`);
    const redrivable = e.status !== 'RUNNING' && e.status !== 'SUCCEEDED';
    return {
      status: 200,
      body: {
        executionArn: e.arn,
        stateMachineArn: STATE_MACHINE_ARN,
        name: e.name,
        status: e.status,
        startDate: seconds(e.startDate),
        stopDate: seconds(e.stopDate),
        input: e.input,
        error: e.error,
        cause: e.cause,
        redriveCount: e.redriveCount,
        redriveStatus: redrivable ? 'REDRIVABLE' : 'NOT_REDRIVABLE',
      },
    };
  }

  private redriveExecution(req: { executionArn?: string; clientToken?: string }): Answer {
    const e = this.find(req.executionArn);
    if (!e) return fault('ExecutionDoesNotExist', `Execution Does Not Exist: '${req.executionArn}'`);
    if (req.clientToken && e.redriveTokens.has(req.clientToken))
      return { status: 200, body: { redriveDate: seconds(e.startDate) } };
    if (e.status === 'RUNNING' || e.status === 'SUCCEEDED')
      return fault('ExecutionNotRedrivable', `Execution is ${e.status} and cannot be redriven`);
    if (req.clientToken) e.redriveTokens.add(req.clientToken);
    e.redriveCount++;
    e.status = 'RUNNING';
    e.stopDate = undefined;
    if (e.error === REPORTED_FAILURE) {
      // The failed step is the Fail state: it fails again.
      e.done = this.stop(e, {
        ok: false,
        error: { name: REPORTED_FAILURE, message: e.cause ?? '' },
        invocations: [],
        ruleInvocations: [],
      });
    } else this.run(e);
    return { status: 200, body: { redriveDate: Date.now() / 1000 } };
  }

  private run(e: LocalExecution): void {
    e.done = runDeployed(this.deployed, JSON.parse(e.input), { ...this.options, executionName: e.name }).then(
      (run) => this.stop(e, run),
      (err: Error) =>
        this.stop(e, {
          ok: false,
          error: { name: 'States.Runtime', message: err.message },
          invocations: [],
          ruleInvocations: [],
        }),
    );
  }

  private async stop(e: LocalExecution, run: DeployedRun): Promise<void> {
    e.runs.push(run);
    e.error = run.ok ? undefined : run.error?.name;
    e.cause = run.ok ? undefined : run.error?.message;
    if (!run.ok && this.options.onStopped) {
      await this.options.onStopped({
        'detail-type': 'Step Functions Execution Status Change',
        detail: { status: 'FAILED', input: e.input, error: e.error ?? null, cause: e.cause ?? null },
      });
    }
    e.stopDate = new Date();
    e.status = run.ok ? 'SUCCEEDED' : 'FAILED';
  }
}
