/**
 * A spec's input as it sits in a store: the objects it is read from (one file, or every file
 * directly under a folder's prefix, in name order, as a local folder is read) and its digest
 * (the same as `digestInput` gives for a local copy), read in ranged pieces so memory holds one
 * piece whatever the input's size, and nothing is copied to local disk.
 */
import { createHash } from 'node:crypto';
import { byName, folderDigest, readsFile, subfolderError } from '../data/input.ts';
import type { Store } from './storage/index.ts';

/** Bytes per ranged read: memory holds one piece. */
const PIECE_BYTES = 8 * 1024 * 1024;

export interface StoredFile {
  readonly key: string;
  readonly size: number;
  /** The version listed (an ETag): every later read of the file asks for it (E_INPUT_CHANGED). */
  readonly version?: string;
}

/**
 * The objects an input at `key` is read from: the object itself, or the files of the folder
 * `key/` (hidden files and markers skipped; sorted by name).
 * @throws InputError E_INPUT_FOLDER for a folder holding a subfolder or no file; undefined when
 *   nothing is at `key` (the caller names the missing input).
 */
export async function storedInputFiles(store: Store, key: string): Promise<StoredFile[] | undefined> {
  const one = await store.stat(key);
  if (one !== undefined) return [one];
  const prefix = `${key.replace(/\/$/, '')}/`;
  const folder = prefix.slice(0, -1).split('/').at(-1)!;
  const files: StoredFile[] = [];
  for (const o of await store.list(prefix)) {
    const rest = o.key.slice(prefix.length);
    if (rest === '' || !readsFile(rest.split('/')[0]!)) continue;
    if (rest.includes('/')) throw subfolderError(folder, rest.split('/')[0]!);
    files.push(o);
  }
  if (files.length === 0) return undefined;
  return files.sort((a, b) => byName(a.key, b.key));
}

/** The SHA-256 of a stored input, as `digestInput` defines it for a file or a folder. */
export async function storedInputDigest(
  store: Store,
  key: string,
  files: readonly StoredFile[],
): Promise<Buffer> {
  const one = files.length === 1 && files[0]!.key === key;
  if (one) return digestObject(store, files[0]!);
  const digests: { name: string; digest: Uint8Array }[] = [];
  for (const f of files)
    digests.push({ name: f.key.split('/').at(-1)!, digest: await digestObject(store, f) });
  return folderDigest(digests);
}

async function digestObject(store: Store, f: StoredFile): Promise<Buffer> {
  const hash = createHash('sha256');
  for (let at = 0; at < f.size; at += PIECE_BYTES)
    hash.update(await store.getRange(f.key, at, Math.min(f.size, at + PIECE_BYTES), f.version));
  return hash.digest();
}
