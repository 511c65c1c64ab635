/**
 * The Audit state of a sharded release: what the staged parts may still give away beyond the
 * release's models (src/report/audit.ts), measured from the staged parts and the spec alone. It
 * needs only the assembled parts, so it runs beside the output parts' verification slices
 * rather than inside Verify after them: on one machine it fills a worker while the slices fill
 * the other; deployed it finishes while they run. Its first phase (the CountDistinct state)
 * counts the distinct values of the columns passed through as bytes over an input of several
 * pieces (for the report and the audit alone): it needs no node, so it runs beside the search,
 * while every other state waits on it. Verify puts the answer (audit.json) into the report.
 */
import { drawsSecretSample } from '../../catalogue/catalogue.ts';
import type { ReleaseAudit } from '../../contracts/report.ts';
import { readArrow } from '../../data/arrow.ts';
import type { EncodedTable } from '../../data/table.ts';
import { InputError } from '../../errors.ts';
import { AUDIT_MAX_ROWS, auditRawColumns, partsAudit } from '../../report/audit.ts';
import { getJson, putJson } from '../storage/index.ts';
import { pieceDistinctCounts, pieceSummaries, rowsReadOf } from './scan-piece.ts';
import type { PhaseEnv, WorkTask } from './types.ts';
import { inputDictionaries, ms, openWork, partFiles, stagedPaths, timing, type Work } from './work.ts';

/** Where the Audit state leaves its answer in the work area. */
export const AUDIT_KEY = 'audit.json';
/** Where its first phase leaves the distinct values it counted (by column name). */
export const DISTINCT_KEY = 'distinct.json';

/**
 * The Audit task: the audit of the staged parts, or (`phase: 'distinct'`, the CountDistinct
 * state, beside the search) the distinct values of the pieces' pass-through columns, which the
 * audit then reads.
 */
export interface AuditTask extends WorkTask {
  readonly phase?: 'distinct';
}

export async function audit(
  task: AuditTask,
  env: PhaseEnv,
): Promise<{ audited: true } | { counted: number }> {
  if (task.phase !== undefined && task.phase !== 'distinct')
    throw new RangeError(`the Audit task has no phase '${String(task.phase)}'`);
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const summaries = await pieceSummaries(work);
  if (task.phase === 'distinct') {
    const counted = await pieceDistinctCounts(work, summaries);
    await putJson(store, work.key(DISTINCT_KEY), Object.fromEntries(counted));
    await timing(store, work.loc.key, 'distinct', performance.now() - t0);
    env.log({ state: 'CountDistinct', columns: counted.size, ms: ms(t0) });
    return { counted: counted.size };
  }
  const distinct = new Map(
    Object.entries(await getJson<Record<string, number>>(store, work.key(DISTINCT_KEY))),
  );
  const values = withDistinct(await inputDictionaries(work), distinct);
  // Shards holding a secret sample: the input's rows, as the scans read them.
  const inputRows = drawsSecretSample(work.spec.privacy) ? rowsReadOf(summaries) : work.file.layout.rowCount;
  const audited = await auditParts(work, env, values, inputRows);
  const taken = performance.now() - t0;
  const answer: AuditAnswer = { audit: audited, distinct: Object.fromEntries(distinct) };
  await putJson(store, work.key(AUDIT_KEY), answer);
  await timing(store, work.loc.key, 'audit', taken);
  env.log({ state: 'Audit', parts: work.file.plan.parts, ms: ms(t0) });
  return { audited: true };
}

/**
 * The Audit state's answer: the audit, and the distinct values it counted of the columns passed
 * through as bytes (none for an input of one piece, whose scan counted them).
 */
export interface AuditAnswer {
  readonly audit: ReleaseAudit;
  readonly distinct: Record<string, number>;
}

export function readAudit(work: Work): Promise<AuditAnswer> {
  return getJson<AuditAnswer>(work.loc.store, work.key(AUDIT_KEY));
}

/** The input's columns with the distinct values counted of its raw columns (`counts`, by name). */
export function withDistinct(values: EncodedTable, counts: ReadonlyMap<string, number>): EncodedTable {
  if (counts.size === 0) return values;
  return {
    ...values,
    columns: values.columns.map((c) => {
      const distinct = counts.get(c.name);
      return distinct === undefined ? c : { ...c, distinct };
    }),
  };
}

/**
 * The audit of a release in parts, each part read once (its pass-through columns as bytes), in
 * partitions of whole classes past AUDIT_MAX_ROWS rows so that its working arrays stay bounded.
 * Deployed, one part's file at a time is downloaded and removed once read: the parts of a large
 * release together would not fit a function's /tmp.
 */
async function auditParts(
  work: Work,
  env: PhaseEnv,
  values: EncodedTable,
  inputRows: number,
): Promise<ReleaseAudit> {
  const { parts } = work.file.plan;
  const raw = auditRawColumns(work.spec);
  // The input's rows bound the released ones: they size the keys' arrays and the partitions.
  const rows = work.file.layout.rowCount;
  const audit = partsAudit(work.spec, values, inputRows, rows);
  for (let i = 0; audit.readsParts && i < parts; i++) {
    const name = partFiles(parts, i).arrow;
    const staged = await stagedPaths(work, env, [name]);
    try {
      const part = stagedRows(staged.path(name), raw, audit.unread);
      if (part) audit.add(part);
    } finally {
      staged.dispose();
    }
  }
  return audit.finish(Math.max(1, Math.ceil(rows / AUDIT_MAX_ROWS)));
}

/**
 * A staged Arrow file's rows (`omit`: columns left out as read); none when it has none (every
 * row of it suppressed and removed).
 */
export function stagedRows(
  path: string,
  raw: ReadonlySet<string>,
  omit: ReadonlySet<string> = new Set(),
): EncodedTable | undefined {
  try {
    return readArrow(path, { raw, omit });
  } catch (e) {
    if (e instanceof InputError && e.code === 'E_INPUT_NO_ROWS') return undefined;
    throw e;
  }
}
