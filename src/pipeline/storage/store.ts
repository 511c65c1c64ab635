/**
 * Where a release's inputs, work files and published files live: one small interface with a
 * local-filesystem and an S3 implementation. Keys are `/`-separated paths inside the store.
 * Locations travel through the state machine as URLs: `file:///abs/path` or `s3://bucket/key`.
 */
import { PpdpError } from '../../errors.ts';

/** An object's bytes: whole, as text, or in pieces one after the other. */
export type PutBody = Uint8Array | string | readonly Uint8Array[];

/** A body's bytes as pieces, one after the other (text as UTF-8; whole bytes as one piece). */
export function bodyPieces(body: PutBody): readonly Uint8Array[] {
  return typeof body === 'string' ? [Buffer.from(body)] : body instanceof Uint8Array ? [body] : body;
}

export interface StoredObject {
  readonly key: string;
  readonly size: number;
  /**
   * What identifies this version of the object, for a read that must get the same bytes
   * later (`getRange`'s `version`): its ETag on S3, a local file's inode, size and mtime.
   */
  readonly version?: string;
}

/** An object's size and hex SHA-256. */
export interface Digest {
  readonly bytes: number;
  readonly sha256: string;
}

export interface Store {
  /** The store's root as a URL (`file:///` or `s3://bucket/`); `url + key` names an object. */
  readonly root: string;
  /** The whole object. @throws StoreError E_STORE_MISSING when there is none. */
  get(key: string): Promise<Uint8Array>;
  /**
   * Bytes [start, end) of an object (a range request on S3). Given `version` (as `stat` or
   * `list` gave it), of that version only (If-Match on S3).
   * @throws StoreError E_INPUT_CHANGED when the object no longer has that version (or is gone).
   */
  getRange(key: string, start: number, end: number, version?: string): Promise<Uint8Array>;
  /** The object's size, or undefined when there is none. */
  head(key: string): Promise<number | undefined>;
  /** The object's size and version, or undefined when there is none. */
  stat(key: string): Promise<StoredObject | undefined>;
  /**
   * Writes an object whole: readers never see a partial object. A body in pieces is written
   * as their concatenation (so that large bytes held in parts need no joined copy).
   */
  put(key: string, body: PutBody): Promise<void>;
  /**
   * Creates an object only if there is none (exclusive create; a conditional PutObject on S3):
   * true when this call created it, false when one was there. Publishing's lock relies on it.
   */
  putIfAbsent(key: string, body: string): Promise<boolean>;
  /**
   * Copies an object inside the store (server-side on S3). Given the source's expected hex
   * SHA-256, a store that learns the copy's checksum on the way (S3) refuses a mismatch.
   */
  copy(from: string, to: string, sha256?: string): Promise<void>;
  /**
   * The object's size and SHA-256, read as a stream (bounded memory, any size).
   * @throws StoreError E_STORE_MISSING when there is none.
   */
  digest(key: string): Promise<Digest>;
  /** Every object whose key starts with `prefix`, sorted by key. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Deletes objects; missing ones are ignored. */
  delete(keys: readonly string[]): Promise<void>;
}

/** A store failed: E_STORE_MISSING (no such object), E_STORE (refused). */
export class StoreError extends PpdpError {}

/**
 * The store could not be reached or answered with a server error: worth retrying. Its name
 * (`StoreUnavailableError`) is what the state machine's Retry matches.
 */
export class StoreUnavailableError extends StoreError {}

/**
 * A read of an input pinned to the version Plan digested found another: the file was replaced,
 * rewritten or removed while the release ran. Its bytes are not the ones the run id names.
 * (A StoreError: the state machine's Catch matches error names, not their classes.)
 */
export function inputChanged(url: string): StoreError {
  return new StoreError(
    'E_INPUT_CHANGED',
    `${url}: the file changed after this release started (it was replaced, rewritten or removed ` +
      'while the release ran), so the release stopped; nothing is published',
    'start the release again once the upload (or write) of the input is complete: upload the input first and release.json last',
  );
}

/** A store and a key (or key prefix ending in `/`) inside it. */
export interface Location {
  readonly store: Store;
  readonly key: string;
}

export function locationUrl(loc: Location): string {
  return loc.store.root + loc.key;
}

/** Joins key parts with `/`, resolving `.` and `..` (never above the store's root). */
export function joinKey(...parts: string[]): string {
  const out: string[] = [];
  const joined = parts.filter((p) => p !== '').join('/');
  for (const seg of joined.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) throw new StoreError('E_STORE_KEY', `${joined}: the path leaves the store`);
      out.pop();
    } else out.push(seg);
  }
  const key = out.join('/');
  return joined.endsWith('/') && key !== '' ? `${key}/` : key;
}

/**
 * A path named relative to `folder` (a key ending in `/`) as a key inside it: joined, `.` and
 * `..` resolved, then checked to lie under `folder` as written, whatever either holds (a
 * folder that is not itself a plain key, one with `.`, `..` or an empty segment, keeps
 * nothing inside it). Undefined when the result is the folder itself or lies outside it.
 */
export function keyInside(folder: string, path: string): string | undefined {
  if (!folder.endsWith('/') || joinKey(folder) !== folder) return undefined;
  let key: string;
  try {
    key = joinKey(folder, path);
  } catch {
    return undefined; // above the store's root
  }
  return key.startsWith(folder) && key.length > folder.length ? key : undefined;
}

/** The folder part of a key, with its trailing `/` (`''` at the root). */
export function dirKey(key: string): string {
  const i = key.lastIndexOf('/');
  return i < 0 ? '' : key.slice(0, i + 1);
}

export function baseKey(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

export function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

export async function getJson<T>(store: Store, key: string): Promise<T> {
  return JSON.parse(utf8(await store.get(key))) as T;
}

export async function putJson(store: Store, key: string, value: unknown): Promise<void> {
  await store.put(key, `${JSON.stringify(value, null, 2)}\n`);
}
