/**
 * The Publish state: the verified files published atomically, manifest last.
 */
import {
  type Manifest,
  type ManifestEntry,
  type PublishSource,
  publishInto,
  storeFolder,
} from '../publish.ts';
import { getJson, joinKey, type StoreError, unsealed, utf8 } from '../storage/index.ts';
import { S3Store } from '../storage/s3.ts';
import type { PhaseEnv, PlanResult, WorkTask } from './types.ts';
import { asFolder, ms, openWork, warner } from './work.ts';

/**
 * Atomic publish (src/pipeline/publish.ts): the old manifest goes first, then each verified
 * file, copied and read back to compare with verified.json's size and SHA-256, then every file
 * the new manifest does not list is removed, then manifest.json last; then the lock Plan took
 * is given up.
 */
export async function publish(
  task: WorkTask & { release: string },
  env: PhaseEnv,
): Promise<Manifest & { release: string }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const release = await env.stores.open(asFolder(task.release));
  const { files } = await getJson<{ files: ManifestEntry[] }>(work.loc.store, work.key('verified.json'));
  const staged = (name: string) => work.key(`staging/${name}`);
  const from = unsealed(work.loc.store);
  let throughHere = Promise.resolve();
  const source: PublishSource = {
    // Inside one store, or between two buckets, a server-side copy: the bytes never pass
    // through this function. Published bytes are read back and compared anyway.
    async copyIn(f) {
      const to = joinKey(release.key, f.name);
      if (release.store === from) await release.store.copy(staged(f.name), to, f.sha256);
      else if (release.store instanceof S3Store && from instanceof S3Store)
        await release.store.copy(staged(f.name), to, f.sha256, from.bucket);
      else {
        // Through this function: one file in memory at a time, whatever the copies at once.
        const copied = throughHere.then(async () =>
          release.store.put(to, await work.loc.store.get(staged(f.name))),
        );
        throughHere = copied.catch(() => {});
        await copied;
      }
    },
    digest: (name) => unsealed(work.loc.store).digest(staged(name)),
  };
  const manifest = await publishInto(
    storeFolder(release),
    files,
    work.file.plan.runId,
    work.file.plan.claim,
    source,
    warner(env),
  );
  await clearFailure(work.file.plan, env);
  env.log({ state: 'Publish', files: files.length, ms: ms(t0) });
  env.say?.(`published ${files.length} files and manifest.json to ${task.release}`);
  return { ...manifest, release: task.release };
}

/**
 * A failure recorded for this release's users no longer holds once it is published: its own
 * (an earlier attempt of this run) or one from before any run id (Plan refused a spec).
 * Another run's failure stays.
 */
async function clearFailure(plan: PlanResult, env: PhaseEnv): Promise<void> {
  if (!plan.failureRecord) return;
  const { store, key } = await env.stores.open(plan.failureRecord);
  // A missing record is the usual case; any other store error fails Publish, to be retried
  // (a retried Publish finds its manifest already written and comes back here).
  const bytes = await store.get(key).catch((e: unknown) => {
    if ((e as StoreError).code === 'E_STORE_MISSING') return undefined;
    throw e;
  });
  if (bytes === undefined) return;
  let runId: unknown;
  try {
    ({ runId } = JSON.parse(utf8(bytes)) as { runId?: unknown });
  } catch {
    return; // not ppdp's record: left as it is
  }
  if (runId === null || runId === plan.runId) await store.delete([key]);
}
