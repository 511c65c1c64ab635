/**
 * The Build state: a method that does not shard builds its release and stages its files in one task.
 */
import type { Claims } from '../../claims/index.ts';
import type { MethodReport } from '../../methods/method.ts';
import { methodFor } from '../../methods/registry.ts';
import { streams } from '../release.ts';
import { putJson } from '../storage/index.ts';
import type { PhaseEnv, WorkTask } from './types.ts';
import { allRows, ms, openWork, timer, timing } from './work.ts';

/** built.json: what Build staged, the method's report and its claims, which Verify checks. */
export interface BuiltFile {
  readonly files: string[];
  readonly report: MethodReport;
  readonly claims: Claims;
}

export async function build(task: WorkTask, env: PhaseEnv): Promise<{ files: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const table = await allRows(work);
  const timings: Record<string, number> = {};
  const time = timer(timings);
  const method = env.method ?? methodFor(work.spec.method.name);
  const ctx = {
    spec: work.spec,
    table,
    kernel: env.kernel,
    time,
    say: env.say ?? (() => {}),
    random: streams(work.spec, table, Buffer.from(work.file.digest, 'hex')),
  };
  const built = method.buildAsync ? await method.buildAsync(ctx) : method.build(ctx);
  for (const f of built.files) await store.put(work.key(`staging/${f.name}`), f.content);
  const out: BuiltFile = {
    files: built.files.map((f) => f.name),
    report: built.report,
    claims: built.claims,
  };
  await putJson(store, work.key('built.json'), out);
  await putJson(store, work.key('staging.json'), { files: out.files });
  await timing(store, work.loc.key, 'build', performance.now() - t0, timings);
  env.log({ state: 'Build', method: work.spec.method.name, files: out.files.length, ms: ms(t0) });
  return { files: out.files.length };
}
