/**
 * The Verify state: the staged release checked independently, the report written, every file hashed.
 */
import { readFileSync } from 'node:fs';
import { drawsSecretSample } from '../../catalogue/catalogue.ts';
import { readClaims } from '../../claims/index.ts';
import { assertReport, type ReleaseAudit, type VerificationCheck } from '../../contracts/report.ts';
import type { EncodedTable } from '../../data/table.ts';
import type { MethodReport } from '../../methods/method.ts';
import { auditRawColumns, auditRelease, unperturbedColumns, withUnperturbed } from '../../report/audit.ts';
import { renderReportHtml } from '../../report/html.ts';
import { byCodeUnits } from '../../util/format.ts';
import {
  decodePartition,
  type PartFacts,
  partitionsOf,
  type ShardFacts,
} from '../../verify/generalization-parts.ts';
import { pieces, verifierFor } from '../../verify/index.ts';
import type { ManifestEntry } from '../publish.ts';
import { frameReport } from '../release.ts';
import { getJson, putJson } from '../storage/index.ts';
import { readAudit, stagedRows, withDistinct } from './audit.ts';
import { rowsRead } from './scan-piece.ts';
import type { PhaseEnv, WorkTask } from './types.ts';
import { sliceKey, slicePartitionKey } from './verify-slice.ts';
import {
  allRows,
  gatherTimings,
  hashed,
  inputDictionaries,
  ms,
  openWork,
  stagedPaths,
  timing,
  type Work,
} from './work.ts';

export async function verify(task: WorkTask, env: PhaseEnv): Promise<{ verified: true; files: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  // The method's claims and report: from the search (sharded) or from Build.
  const source = work.file.plan.mode === 'sharded' ? 'search.json' : 'built.json';
  const json = await getJson<{ claims: unknown; report: MethodReport }>(store, work.key(source));
  const claims = readClaims(json.claims, work.spec.method.name, source);
  const methodReport = json.report;
  env.say?.('verifying the release independently');
  const t = performance.now();
  const { checks, table, data, audit, auditMs } =
    work.file.plan.mode === 'sharded'
      ? await verifyPieces(work, claims)
      : await verifyWhole(work, env, claims);
  await timing(
    store,
    work.loc.key,
    'verify',
    performance.now() - t,
    auditMs === undefined ? {} : { audit: Math.round(auditMs * 100) / 100 },
  );
  const timings = await gatherTimings(store, work.loc.key);
  timings.total = Math.round((Date.now() - work.file.started) * 100) / 100;
  const report = frameReport(work.spec, table, work.file.plan.runId, methodReport, checks, timings, audit);
  const reports = {
    'report.json': `${JSON.stringify(assertReport(report), null, 2)}\n`,
    'report.html': renderReportHtml(report),
  };
  await Promise.all(
    Object.entries(reports).map(([name, body]) => store.put(work.key(`staging/${name}`), body)),
  );
  // Hashes of exactly the bytes that were verified and will be published.
  const entries: ManifestEntry[] = [
    ...data,
    ...Object.entries(reports).map(([name, body]) => hashed(name, Buffer.from(body))),
  ].sort((a, b) => byCodeUnits(a.name, b.name));
  await putJson(store, work.key('verified.json'), { files: entries });
  env.log({ state: 'Verify', checks: checks.length, files: entries.length, ms: ms(t0) });
  return { verified: true, files: entries.length };
}

interface Verified {
  readonly checks: VerificationCheck[];
  /** The input as the report describes it (its columns and their values). */
  readonly table: EncodedTable;
  /** The staged data files, hashed. */
  readonly data: ManifestEntry[];
  /** What the release may give away beyond its models (the amber verdict). */
  readonly audit: ReleaseAudit;
  /** The audit's share of the Verify state's time, ms (report.json timings.audit), when Verify ran it. */
  readonly auditMs?: number;
}

/**
 * A sharded release: the slices' expectations and summaries compared (VerifySlice wrote them),
 * one partition of their classes at a time.
 */
async function verifyPieces(work: Work, claims: unknown): Promise<Verified> {
  const { store } = work.loc;
  const shards = work.file.layout.shards.length;
  const { parts } = work.file.plan;
  const partitions = partitionsOf(work.file.layout.rowCount);
  const read = <T>(kind: 'shard' | 'part', count: number) =>
    Promise.all(Array.from({ length: count }, (_, i) => getJson<T>(store, work.key(sliceKey(kind, i)))));
  type Split = { partitions: number };
  const [values, expected, summaries] = await Promise.all([
    inputDictionaries(work),
    read<ShardFacts & Split>('shard', shards),
    read<PartFacts & Split & { files: ManifestEntry[] }>('part', parts),
  ]);
  if ([...expected, ...summaries].some((s) => s.partitions !== partitions))
    throw new RangeError(`the verification slices are not split into the plan's ${partitions} partitions`);
  // Shards holding a secret sample: the input's rows, as the scans read them, for its accounting.
  const inputRows = drawsSecretSample(work.spec.privacy) ? await rowsRead(work) : undefined;
  const check = pieces.checker(work.spec, values, claims, expected, summaries, inputRows);
  const classesOf = (kind: 'shard' | 'part', count: number, p: number) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const key = slicePartitionKey(kind, i, p);
        return decodePartition(await store.get(work.key(key)), key);
      }),
    );
  for (let p = 0; p < partitions; p++) {
    const [s, t] = await Promise.all([classesOf('shard', shards, p), classesOf('part', parts, p)]);
    check.add({ shards: s, parts: t });
  }
  const checks = check.finish();
  // The Audit state measured the staged parts beside the slices (its own time is its timing),
  // and counted the distinct values of the columns passed through as bytes.
  const audited = await readAudit(work);
  return {
    checks,
    table: withDistinct(values, new Map(Object.entries(audited.distinct))),
    data: summaries.flatMap((s) => s.files),
    audit: audited.audit,
  };
}

/** A staged JSON file, or undefined when it is not JSON (the verifier's checks say so). */
function stagedJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

/** A single-task release: the method's verifier over the whole input and the staged files. */
async function verifyWhole(work: Work, env: PhaseEnv, claims: unknown): Promise<Verified> {
  const { store } = work.loc;
  const { files } = await getJson<{ files: string[] }>(store, work.key('staging.json'));
  const table = await allRows(work);
  const staged = await stagedPaths(work, env, files);
  try {
    const checks = verifierFor(work.spec.method.name).verify({
      spec: work.spec,
      table,
      claims,
      staged: staged.path,
    });
    const t = performance.now();
    const audit = withUnperturbed(
      work.spec,
      auditRelease(
        work.spec,
        table,
        table.rowCount,
        [stagedRows(staged.path('data.arrow'), auditRawColumns(work.spec))].flatMap((t) => t ?? []),
      ),
      // Read from the staged matrices (the verifier checked them), not from the method's word.
      files.includes('matrices.json')
        ? unperturbedColumns(work.spec, stagedJson(staged.path('matrices.json')))
        : [],
    );
    return { checks, table, data: files.map(staged.entry), audit, auditMs: performance.now() - t };
  } finally {
    staged.dispose();
  }
}
