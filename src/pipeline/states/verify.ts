/**
 * The Verify state: the staged release checked independently, the report written, every file hashed.
 */
import { createHash } from 'node:crypto';
import type { MethodReport } from '../../methods/method.ts';
import { renderReportHtml } from '../../report/html.ts';
import type { VerificationCheck } from '../../report/types.ts';
import { byCodeUnits } from '../../util/format.ts';
import { verifierFor } from '../../verify/index.ts';
import type { ManifestEntry } from '../publish.ts';
import { frameReport } from '../release.ts';
import { getJson, putJson } from '../storage/index.ts';
import type { PhaseEnv, WorkTask } from './types.ts';
import {
  allRows,
  disposeStaged,
  gatherTimings,
  ms,
  openWork,
  partFiles,
  stagedPaths,
  timing,
} from './work.ts';

export async function verify(task: WorkTask, env: PhaseEnv): Promise<{ verified: true; files: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const { parts, mode } = work.file.plan;
  const dataParts = Array.from({ length: parts }, (_, p) => partFiles(parts, p));
  const { files } =
    mode === 'sharded'
      ? { files: dataParts.flatMap((f) => [f.arrow, f.csv]) }
      : await getJson<{ files: string[] }>(store, work.key('staging.json'));
  const table = await allRows(work);
  // The method's claims and report: from the search (sharded) or from Build.
  const { claims, report: methodReport } = await getJson<{ claims: unknown; report: MethodReport }>(
    store,
    work.key(work.file.plan.mode === 'sharded' ? 'search.json' : 'built.json'),
  );
  env.say?.('verifying the release independently');
  const local = await stagedPaths(work, env, files);
  const t = performance.now();
  let checks: VerificationCheck[];
  try {
    checks = verifierFor(work.spec.method.name).verify({
      spec: work.spec,
      table,
      claims,
      staged: local,
      dataParts,
    });
  } finally {
    disposeStaged(work, env);
  }
  await timing(store, work.loc.key, 'verify', performance.now() - t);
  const timings = await gatherTimings(store, work.loc.key);
  timings.total = Math.round((Date.now() - work.file.started) * 100) / 100;
  const report = frameReport(work.spec, table, work.file.plan.runId, methodReport, checks, timings);
  await Promise.all([
    store.put(work.key('staging/report.json'), `${JSON.stringify(report, null, 2)}\n`),
    store.put(work.key('staging/report.html'), renderReportHtml(report)),
  ]);
  // Hash exactly the bytes that were verified and will be published.
  const names = [...files, 'report.html', 'report.json'].sort(byCodeUnits);
  const entries: ManifestEntry[] = [];
  for (const name of names) {
    const bytes = await store.get(work.key(`staging/${name}`));
    entries.push({ name, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  }
  await putJson(store, work.key('verified.json'), { files: entries });
  env.log({ state: 'Verify', checks: checks.length, files: entries.length, ms: ms(t0) });
  return { verified: true, files: entries.length };
}
