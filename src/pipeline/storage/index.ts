/**
 * Turns location URLs into stores. `file:///abs/path` (or a plain path) is the local
 * filesystem; `s3://bucket/key` is S3, loaded only when used (the CLI's cold start never
 * pays for the AWS SDK on a local release).
 */
import { resolve } from 'node:path';
import { FsStore } from './fs.ts';
import type { S3StoreOptions } from './s3.ts';
import { type Location, type Store, StoreError } from './store.ts';

export { fileVersion, localVersion } from './fs.ts';
export { SealedStore, sealWork, unsealed } from './sealed.ts';
export * from './store.ts';

export interface StoreResolver {
  open(url: string): Promise<Location>;
  /** Releases clients (S3 sockets). */
  close(): void;
}

const fsStore = new FsStore();

/** A URL for a local path: `file:///abs/path` (not percent-encoded; keys are raw paths). */
export function fileUrl(path: string, folder = false): string {
  const abs = resolve(path);
  return `file://${abs}${folder && !abs.endsWith('/') ? '/' : ''}`;
}

/**
 * The scheme a location starts with (`s3`, `file`, `https`), lower case; undefined for a path.
 * A scheme has two letters or more: `C:\\` is a drive; `./s3:` a local name holding ":".
 */
export function urlScheme(location: string): string | undefined {
  return /^([a-z][a-z0-9+.-]+):/i.exec(location)?.[1]?.toLowerCase();
}

export function isStoreUrl(s: string): boolean {
  return s.startsWith('s3://') || s.startsWith('file://');
}

/**
 * Refuses a location that starts with a scheme other than `s3://` and `file://` (two letters or
 * more: `C:\` is a drive), a malformed `s3:` or `file:` URL among them, instead of taking it as
 * a local folder named `s3:` that a release would silently go to. `named` names it in the message
 * (e.g. `--store s3:/bad`), and an `s3://` URL whose bucket name S3 would refuse.
 */
export function checkStoreUrl(url: string, named = url): void {
  if (url.startsWith('s3://')) {
    checkBucketName(url, named);
    return;
  }
  if (url.startsWith('file://')) return;
  const scheme = urlScheme(url);
  if (scheme === undefined) return;
  const known = scheme === 's3' || scheme === 'file';
  throw new StoreError(
    'E_STORE_URL',
    known ? `${named}: a malformed ${scheme} URL` : `${named}: unsupported store (${scheme}:)`,
    known
      ? `the form is ${scheme === 's3' ? 's3://bucket/prefix' : 'file:///absolute/path'} (lower case, two slashes after ${scheme}:)`
      : 'use s3://bucket/prefix or a local path (a local folder whose name holds ":" as ./name)',
  );
}

/** The bucket of an `s3://` URL. */
function bucketOf(url: string): string {
  const rest = url.slice('s3://'.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? rest : rest.slice(0, slash);
}

/** Refuses an `s3://` URL whose bucket name S3 does not allow (`named` names it in the message). */
function checkBucketName(url: string, named = url): void {
  const bucket = bucketOf(url);
  if (/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) return;
  throw new StoreError(
    'E_STORE_URL',
    `${named}: ${bucket === '' ? 'no bucket name' : `'${bucket}' is not a valid S3 bucket name`} (3–63 characters: lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit)`,
    'e.g. s3://my-bucket/prefix',
  );
}

/** Opens stores for URLs; one S3 client per bucket. */
export function storeResolver(s3: S3StoreOptions = {}): StoreResolver {
  const buckets = new Map<string, Store & { destroy(): void }>();
  return {
    async open(url: string): Promise<Location> {
      if (url.startsWith('s3://')) {
        checkBucketName(url);
        const bucket = bucketOf(url);
        const rest = url.slice('s3://'.length);
        const key = rest.length > bucket.length ? rest.slice(bucket.length + 1) : '';
        let store = buckets.get(bucket);
        if (!store) {
          const { S3Store } = await import('./s3.ts');
          store = new S3Store(bucket, s3);
          buckets.set(bucket, store);
        }
        return { store, key };
      }
      if (url.startsWith('file://'))
        return { store: fsStore, key: url.slice('file://'.length).replace(/^\/+/, '') };
      checkStoreUrl(url);
      const abs = resolve(url);
      return { store: fsStore, key: (url.endsWith('/') ? `${abs}/` : abs).replace(/^\/+/, '') };
    },
    close(): void {
      for (const s of buckets.values()) s.destroy();
      buckets.clear();
    },
  };
}
