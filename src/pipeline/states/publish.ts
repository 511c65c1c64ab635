/**
 * The Publish state: the verified files published atomically, manifest last.
 */
import { drawsSecretSample } from '../../catalogue/catalogue.ts';
import {
  type Manifest,
  type ManifestEntry,
  type PublishSource,
  publishInto,
  storeFolder,
} from '../publish.ts';
import { getJson, joinKey, SealedStore, type StoreError, unsealed, utf8 } from '../storage/index.ts';
import { S3Store } from '../storage/s3.ts';
import type { PhaseEnv, PlanResult, WorkTask } from './types.ts';
import { asFolder, ms, openWork, warner } from './work.ts';

/**
 * Atomic publish (src/pipeline/publish.ts): a folder already holding this run's release,
 * complete (or, for a secret sample, any intact release of this run), is left as it is;
 * otherwise the old manifest goes first, then each verified file, copied and read back to
 * compare with verified.json's size and SHA-256 (a local hard link still at the version its
 * staged file's seal recorded is compared by that seal), then every file the new manifest does not
 * list is removed, then manifest.json last; then the lock Plan took is given up.
 */
export async function publish(
  task: WorkTask & { release: string },
  env: PhaseEnv,
): Promise<Manifest & { release: string }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const release = await env.stores.open(asFolder(task.release));
  const sampled = drawsSecretSample(work.spec.privacy);
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
    // A local copy is a hard link: a published file at the version its staged file's seal
    // recorded is that file, as Assemble sealed it and the slices read it, and is not read again.
    async unchanged(f) {
      if (!(work.loc.store instanceof SealedStore) || release.store !== from) return undefined;
      const version = (await release.store.stat(joinKey(release.key, f.name)))?.version;
      return work.loc.store.sealedAt(staged(f.name), version);
    },
  };
  const manifest = await publishInto(
    storeFolder(release),
    files,
    work.file.plan.runId,
    work.file.plan.claim,
    source,
    warner(env),
    // `ppdp apply` re-applies a saved transformation: its release replaces the folder's. A
    // secret sample is drawn afresh by each run: the one published stays (it was released).
    env.method !== undefined ? 'never' : sampled ? 'sample' : 'same',
  );
  await clearFailure(work.file.plan, work.file.started, env);
  // Files other than the ones verified now: the release of this run published before, kept.
  const kept = JSON.stringify(manifest.files) !== JSON.stringify(files);
  env.log({ state: 'Publish', files: files.length, kept, ms: ms(t0) });
  env.say?.(
    kept
      ? `${task.release} already holds this run's release (the same spec and input): left as it is${
          sampled
            ? ' (its secret sample is kept, whatever this run drew: another sample would release the same people again)'
            : ''
        }`
      : `published ${files.length} files and manifest.json to ${task.release}`,
  );
  return { ...manifest, release: task.release };
}

/**
 * A failure recorded for this release's users no longer holds once it is published, if its
 * run started before this one: an earlier attempt of this run, one from before any run id
 * (Plan refused a spec), or an earlier run's (the input fixed and dropped again). A failure of
 * a run that started later stays: it is the latest. A record tells when its run started
 * (`started`, once Plan had named the run) or, failing that, when it failed (`at`), which is
 * later than the start: a record is removed only when that time is before this run's start.
 */
export async function clearFailure(plan: PlanResult, started: number, env: PhaseEnv): Promise<void> {
  if (!plan.failureRecord) return;
  const { store, key } = await env.stores.open(plan.failureRecord);
  // A missing record is the usual case; any other store error fails Publish, to be retried
  // (a retried Publish finds its manifest already written and comes back here).
  const bytes = await store.get(key).catch((e: unknown) => {
    if ((e as StoreError).code === 'E_STORE_MISSING') return undefined;
    throw e;
  });
  if (bytes === undefined) return;
  let record: { format?: unknown; runId?: unknown; started?: unknown; at?: unknown };
  try {
    record = JSON.parse(utf8(bytes)) as typeof record;
  } catch {
    return; // not ppdp's record: left as it is
  }
  if (record?.format !== 'ppdp-error/1') return;
  const since = Date.parse(String(record.started ?? record.at));
  if (record.runId === plan.runId || since < started) await store.delete([key]);
}
