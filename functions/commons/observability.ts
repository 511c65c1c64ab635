/**
 * Logs, metrics and traces of the Lambda handlers on AWS Powertools for Lambda. `log(level,
 * event)` has the shape of the hand-written `log` in runtime.ts and writes the same fields as
 * one Powertools JSON line; a state's outcome line (`{ state, outcome, ms }`) also becomes
 * CloudWatch metrics (embedded metric format); `traced(state, handler)` puts an invocation in
 * an X-Ray subsegment annotated with the state. Names, counts and times only: never data
 * values, never error messages (they can name a value; they go to error.json).
 *
 * Settings from the environment: POWERTOOLS_SERVICE_NAME and POWERTOOLS_METRICS_NAMESPACE (the
 * stack sets both to `ppdp`); PPDP_LOG=off silences logs and metrics.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { LogEvent } from '../../src/pipeline/states/types.ts';

const serviceName = process.env.POWERTOOLS_SERVICE_NAME ?? 'ppdp';
export const logger = new Logger({ serviceName });
export const metrics = new Metrics({
  serviceName,
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'ppdp',
});
export const tracer = new Tracer({ serviceName });

export function log(level: 'info' | 'error', event: LogEvent): void {
  if (process.env.PPDP_LOG === 'off') return;
  logger[level](String(event.state ?? serviceName), { ...event });
  const { state, outcome, ms } = event;
  if (typeof state === 'string' && typeof ms === 'number' && (outcome === 'ok' || outcome === 'failed')) {
    metrics.addDimension('state', state);
    metrics.addMetric('StateDuration', MetricUnit.Milliseconds, ms);
    metrics.addMetric(outcome === 'ok' ? 'StateSucceeded' : 'StateFailed', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  }
}

/**
 * The handler inside an X-Ray subsegment `## <state>` annotated with the state, the service
 * and whether this was a cold start. A failure only flags the subsegment: its message is not
 * recorded. Without active tracing (outside Lambda) the handler runs as it is.
 */
export function traced<I, O, C>(
  state: string,
  handler: (input: I, context?: C) => Promise<O>,
): (input: I, context?: C) => Promise<O> {
  return async (input, context) => {
    const parent = tracer.isTracingEnabled() ? tracer.getSegment() : undefined;
    if (!parent) return handler(input, context);
    const segment = parent.addNewSubsegment(`## ${state}`);
    tracer.setSegment(segment);
    tracer.annotateColdStart();
    tracer.addServiceNameAnnotation();
    tracer.putAnnotation('state', state);
    try {
      return await handler(input, context);
    } catch (e) {
      segment.addErrorFlag();
      throw e;
    } finally {
      segment.close();
      tracer.setSegment(parent);
    }
  };
}
