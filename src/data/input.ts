/**
 * Input files read in fixed-size pieces from a file descriptor, so a large input never sits in
 * memory as a whole: the readers keep one piece (plus a partial row) at a time.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { InputError } from '../errors.ts';
import { headAndTail, type InputMagic, inputMagic } from '../util/magic.ts';
import { cannotRead, errorCode } from '../util/unreadable.ts';

/** Bytes read per step: large enough for few system calls, small enough to stay out of the way. */
export const READ_CHUNK_BYTES = 8 * 1024 * 1024;

/** An open input file. `close` it when done (the readers do so in `finally`). */
export interface InputFile {
  readonly fd: number;
  /** Size in bytes when the file was opened. */
  readonly size: number;
}

function unreadable(path: string, err: unknown): InputError {
  const file = basename(path);
  if (errorCode(err) === 'ENOENT') {
    return new InputError(
      'E_INPUT_MISSING',
      `${file}: input file not found (${resolve(path)})`,
      `check that the file exists at ${resolve(path)}`,
    );
  }
  const { message, hint } = cannotRead('input file', file, path, err);
  return new InputError('E_INPUT_MISSING', message, hint);
}

/**
 * Opens an input file for reading.
 * @throws InputError E_INPUT_MISSING if it does not exist, cannot be read or is a directory.
 */
export function openInput(path: string): InputFile {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw unreadable(path, err);
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    return { fd, size: stat.size };
  } catch (err) {
    closeSync(fd);
    throw unreadable(path, err);
  }
}

/** Fills `buf[from, to)` from the file's current position; returns the bytes read (less at the end). */
export function readInto(path: string, input: InputFile, buf: Uint8Array, from: number, to: number): number {
  let at = from;
  while (at < to) {
    let n: number;
    try {
      n = readSync(input.fd, buf, at, to - at, null);
    } catch (err) {
      throw unreadable(path, err);
    }
    if (n === 0) break;
    at += n;
  }
  return at - from;
}

/** Reads `buf.length` bytes (fewer at the end) at file position `position`. */
export function readAt(path: string, input: InputFile, buf: Uint8Array, position: number): number {
  let at = 0;
  while (at < buf.length) {
    let n: number;
    try {
      n = readSync(input.fd, buf, at, buf.length - at, position + at);
    } catch (err) {
      throw unreadable(path, err);
    }
    if (n === 0) break;
    at += n;
  }
  return at;
}

/**
 * The bytes of an input file, all at once (for small files and digests of small files).
 * @throws InputError E_INPUT_MISSING if it does not exist or cannot be read.
 */
export function readInputBytes(path: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (err) {
    throw unreadable(path, err);
  }
}

/**
 * SHA-256 of an input, read in pieces: the digest of a large input without holding it. A
 * folder's is the digest of its files' names and digests, in the order they are read.
 * @throws InputError E_INPUT_MISSING if it does not exist or cannot be read.
 */
export function digestInput(path: string): Buffer {
  if (!isFolder(path)) return digestFile(path);
  return folderDigest(folderFiles(path).map((file) => ({ name: basename(file), digest: digestFile(file) })));
}

/** A folder's digest from its files' names and digests, in the order they are read. */
export function folderDigest(files: readonly { name: string; digest: Uint8Array }[]): Buffer {
  const hash = createHash('sha256');
  for (const f of files) hash.update(f.name).update(Uint8Array.of(0)).update(f.digest);
  return hash.digest();
}

function digestFile(path: string): Buffer {
  const input = openInput(path);
  try {
    const hash = createHash('sha256');
    // A pipe reports size 0: read it in whole pieces too.
    const buf = Buffer.allocUnsafeSlow(
      input.size > 0 ? Math.min(READ_CHUNK_BYTES, input.size + 1) : READ_CHUNK_BYTES,
    );
    for (;;) {
      const n = readInto(path, input, buf, 0, buf.length);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
    }
    return hash.digest();
  } finally {
    closeSync(input.fd);
  }
}

/** True when `path` names a folder (a missing path is not one). */
export function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Whether a folder input reads the file named `name`: not when it starts with `.` or `_`
 * (hidden files and markers such as `_SUCCESS`).
 */
export function readsFile(name: string): boolean {
  return !name.startsWith('.') && !name.startsWith('_');
}

/**
 * The files a folder input is read from, in sorted name order: every file it reads (readsFile).
 * @throws InputError E_INPUT_FOLDER when the folder holds a subfolder or no file.
 */
export function folderFiles(path: string): string[] {
  const folder = basename(path);
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch (err) {
    throw unreadable(path, err);
  }
  const files: string[] = [];
  for (const e of entries.sort((a, b) => byName(a.name, b.name))) {
    if (!readsFile(e.name)) continue;
    if (e.isDirectory()) throw subfolderError(folder, e.name);
    files.push(join(path, e.name));
  }
  if (files.length === 0) {
    throw new InputError(
      'E_INPUT_FOLDER',
      `${folder}: the input folder holds no file to read`,
      "put the table's .csv, .arrow, .parquet or .xlsx files in the folder, or name one file as the input",
    );
  }
  return files;
}

/** The order a folder's files are read in: by name, code unit by code unit. */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The refusal of a folder input holding a folder (a partitioned table). */
export function subfolderError(folder: string, name: string): InputError {
  return new InputError(
    'E_INPUT_FOLDER',
    `${folder}: the input folder holds a folder, ${name}; only the files directly in it are read`,
    'put all the files of the table directly in the input folder (partitioned sub-folders are not read), or name one file as the input',
  );
}

/** An input's size in bytes: a folder's is its files' total. Throws like statSync. */
export function inputSize(path: string): number {
  if (!isFolder(path)) return statSync(path).size;
  return folderFiles(path).reduce((n, f) => n + statSync(f).size, 0);
}

/** inputMagic of an open file (its `size` bytes). */
export function magicOf(path: string, input: InputFile): InputMagic | undefined {
  return inputMagic(
    ...headAndTail(input.size, (buffer, position) => {
      readAt(path, input, buffer, position);
    }),
  );
}
