/**
 * The handlers' Powertools setup (functions/commons/observability.ts): one JSON log line per
 * `log(level, event)` with the event's fields, metrics from a state's outcome line, and an
 * X-Ray subsegment per traced invocation — received here by a stand-in X-Ray daemon (UDP).
 */
import { createSocket } from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const daemon = createSocket('udp4');
const received: string[] = [];
const saved = { ...process.env };
let observability: typeof import('../../functions/commons/observability.ts');

beforeAll(async () => {
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  daemon.on('message', (m) => received.push(m.toString('utf8')));
  // A Lambda invocation with active tracing, as far as Powertools and the X-Ray SDK can tell.
  Object.assign(process.env, {
    POWERTOOLS_DEV: 'true', // the global console, so the lines can be read here
    POWERTOOLS_METRICS_DISABLED: 'false', // POWERTOOLS_DEV alone turns metrics off
    POWERTOOLS_SERVICE_NAME: 'ppdp',
    POWERTOOLS_METRICS_NAMESPACE: 'ppdp-test',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    AWS_LAMBDA_FUNCTION_NAME: 'ppdp-test',
    LAMBDA_TASK_ROOT: process.cwd(),
    _X_AMZN_TRACE_ID: 'Root=1-67a1b2c3-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
    AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
  });
  delete process.env.PPDP_LOG;
  observability = await import('../../functions/commons/observability.ts');
});

afterEach(() => vi.restoreAllMocks());

afterAll(() => {
  daemon.close();
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

/** The JSON lines written to console[method] while fn runs. */
function lines(method: 'info' | 'error' | 'log', fn: () => void): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const spy = vi.spyOn(console, method).mockImplementation((line: string) => {
    out.push(JSON.parse(line));
  });
  fn();
  spy.mockRestore();
  return out;
}

describe('the handlers’ Powertools setup', () => {
  it('writes one structured line per log call, with the event’s fields', () => {
    const [line] = lines('info', () =>
      observability.log('info', { state: 'Plan', runId: 'abc', rows: 1200, shards: 2 }),
    );
    expect(line).toMatchObject({
      level: 'INFO',
      message: 'Plan',
      service: 'ppdp',
      state: 'Plan',
      runId: 'abc',
      rows: 1200,
      shards: 2,
    });
    const [error] = lines('error', () =>
      observability.log('error', { state: 'Verify', outcome: 'failed', error: 'VerificationError' }),
    );
    expect(error).toMatchObject({ level: 'ERROR', state: 'Verify', error: 'VerificationError' });
  });

  it('turns a state’s outcome line into metrics per state', () => {
    let logged: Record<string, unknown>[] = [];
    const emf = lines('log', () => {
      logged = lines('info', () => observability.log('info', { state: 'Search', outcome: 'ok', ms: 512 }));
    });
    expect(logged).toHaveLength(1);
    expect(emf).toHaveLength(1);
    const metric = emf[0] as Record<string, unknown> & { _aws: { CloudWatchMetrics: unknown[] } };
    expect(metric).toMatchObject({ state: 'Search', service: 'ppdp', StateDuration: 512, StateSucceeded: 1 });
    expect(metric._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'ppdp-test',
      Dimensions: [expect.arrayContaining(['service', 'state'])],
    });
    // A line without an outcome is a log line only.
    expect(lines('log', () => lines('info', () => observability.log('info', { state: 'Plan' })))).toEqual([]);
  });

  it('is silent with PPDP_LOG=off', () => {
    process.env.PPDP_LOG = 'off';
    try {
      expect(
        lines('log', () =>
          expect(
            lines('info', () => observability.log('info', { state: 'Plan', outcome: 'ok', ms: 1 })),
          ).toEqual([]),
        ),
      ).toEqual([]);
    } finally {
      delete process.env.PPDP_LOG;
    }
  });

  it('traces each invocation in a subsegment annotated with its state; a failure is flagged, not described', async () => {
    const handler = observability.traced('ApplyShard', async (input: { index: number }) => input.index + 1);
    await expect(handler({ index: 41 })).resolves.toBe(42);
    const failing = observability.traced('Verify', async () => {
      throw new Error('a message that could name a value');
    });
    await expect(failing({})).rejects.toThrow('a message that could name a value');
    await vi.waitFor(() => expect(received.length).toBeGreaterThanOrEqual(2), { timeout: 5000 });
    const segments = received.map((m) => JSON.parse(m.slice(m.indexOf('\n') + 1)));
    const apply = segments.find((s) => s.name === '## ApplyShard');
    expect(apply.annotations).toMatchObject({ state: 'ApplyShard', Service: 'ppdp' });
    const verify = segments.find((s) => s.name === '## Verify');
    expect(verify).toMatchObject({ error: true, annotations: { state: 'Verify' } });
    expect(JSON.stringify(verify)).not.toContain('could name a value');
  });
});
