/**
 * The local filesystem as a store: keys are absolute paths without their leading `/`. Every
 * write goes to a hidden temporary file first and is renamed into place, so a reader never
 * sees a partial object.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import {
  copyFile,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { isMainThread, Worker } from 'node:worker_threads';
import {
  type Digest,
  inputChanged,
  type PutBody,
  type Store,
  type StoredObject,
  StoreError,
} from './store.ts';

/**
 * A local file's version (StoredObject.version): its inode, size and mtime. A file replaced
 * (renamed over), or rewritten in place at another size or at a later time, has another.
 */
export function fileVersion(st: { ino: number; size: number; mtimeMs: number }): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** The version of the local file at `path` now; undefined when there is no file there. */
export function localVersion(path: string): string | undefined {
  try {
    const st = statSync(path);
    return st.isFile() ? fileVersion(st) : undefined;
  } catch {
    return undefined;
  }
}

/** Bytes read at a time when digesting a file. */
const DIGEST_CHUNK_BYTES = 1024 * 1024;
/** Files this large are hashed in a thread of their own (see `digest`). */
const THREAD_DIGEST_BYTES = 16 * 1024 * 1024;

/** A hashing thread's loop: a file's size and SHA-256, read through one reused buffer. */
const HASHER = `
const { parentPort } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { createHash } = require('node:crypto');
const buffer = Buffer.allocUnsafeSlow(${DIGEST_CHUNK_BYTES});
parentPort.on('message', ({ path }) => {
  try {
    const hash = createHash('sha256');
    let bytes = 0;
    const fd = openSync(path, 'r');
    try {
      for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0; bytes += n) hash.update(buffer.subarray(0, n));
    } finally {
      closeSync(fd);
    }
    parentPort.postMessage({ bytes, sha256: hash.digest('hex') });
  } catch (e) {
    parentPort.postMessage({ error: { message: String(e && e.message), code: e && e.code } });
  }
});
`;

/** Idle hashing threads, and files waiting for one; at most one thread per core. */
const hashers: { idle: Worker[]; started: number; waiting: (() => void)[] } = {
  idle: [],
  started: 0,
  waiting: [],
};

/** A file's digest, computed in a hashing thread (started on first use, kept idle and unref'd). */
async function digestInThread(path: string): Promise<Digest> {
  while (hashers.idle.length === 0 && hashers.started >= availableParallelism())
    await new Promise<void>((go) => hashers.waiting.push(go));
  let worker = hashers.idle.pop();
  if (!worker) {
    worker = new Worker(HASHER, { eval: true });
    hashers.started++;
  }
  worker.ref();
  let alive = true;
  try {
    const answer = await new Promise<Digest | { error: { message: string; code?: string } }>((done, fail) => {
      worker.once('message', done);
      worker.once('error', (e) => {
        alive = false;
        fail(e);
      });
      worker.postMessage({ path });
    });
    if ('error' in answer) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
    return answer;
  } finally {
    worker.removeAllListeners('message').removeAllListeners('error');
    worker.unref();
    if (alive) hashers.idle.push(worker);
    else hashers.started--;
    hashers.waiting.shift()?.();
  }
}

export class FsStore implements Store {
  readonly root = 'file:///';

  private path(key: string): string {
    return `/${key}`;
  }

  async get(key: string): Promise<Uint8Array> {
    try {
      return await readFile(this.path(key));
    } catch (e) {
      throw this.error(e, key);
    }
  }

  /** With `version`, the file's is compared before and after the read (a rewrite during it shows after). */
  async getRange(key: string, start: number, end: number, version?: string): Promise<Uint8Array> {
    let fd: number | undefined;
    const pinned = (at: number) => {
      if (version !== undefined && fileVersion(fstatSync(at)) !== version)
        throw inputChanged(this.root + key);
    };
    try {
      try {
        fd = openSync(this.path(key), 'r');
      } catch (e) {
        if (version !== undefined && (e as { code?: string }).code === 'ENOENT')
          throw inputChanged(this.root + key);
        throw e;
      }
      pinned(fd);
      const out = Buffer.allocUnsafe(end - start);
      let done = 0;
      while (done < out.length) {
        const n = readSync(fd, out, done, out.length - done, start + done);
        if (n === 0) break;
        done += n;
      }
      pinned(fd);
      if (done !== out.length)
        throw new StoreError('E_STORE_RANGE', `${this.root}${key}: shorter than expected`);
      return out;
    } catch (e) {
      throw this.error(e, key);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  async head(key: string): Promise<number | undefined> {
    return (await this.stat(key))?.size;
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    try {
      const s = await stat(this.path(key));
      return s.isFile() ? { key, size: s.size, version: fileVersion(s) } : undefined;
    } catch {
      return undefined;
    }
  }

  async put(key: string, body: PutBody): Promise<void> {
    await this.viaTemp(key, key, async (tmp, path) => {
      await writeFile(tmp, body);
      await rename(tmp, path);
    });
  }

  /** A hard link from a whole temporary file: exclusive, and never seen partial or empty. */
  async putIfAbsent(key: string, body: string): Promise<boolean> {
    return this.viaTemp(key, key, async (tmp, path) => {
      await writeFile(tmp, body);
      try {
        await link(tmp, path);
        return true;
      } catch (e) {
        if ((e as { code?: string }).code === 'EEXIST') return false;
        throw e;
      } finally {
        await rm(tmp, { force: true });
      }
    });
  }

  /**
   * A hard link where the file system allows it (a release's gigabyte of data is published in
   * no time), else a copy. Safe because objects are never changed in place: `put` replaces an
   * object by renaming a new file over it, which leaves the linked one as it was.
   */
  async copy(from: string, to: string): Promise<void> {
    await this.viaTemp(to, from, async (tmp, path) => {
      try {
        await link(this.path(from), tmp);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK') throw e;
        await copyFile(this.path(from), tmp);
      }
      await rename(tmp, path);
    });
  }

  async digest(key: string): Promise<Digest> {
    try {
      // Publish reads every release file back on the main thread: large ones are hashed in
      // threads of their own, side by side, while this thread waits for them.
      if (isMainThread && (await stat(this.path(key))).size >= THREAD_DIGEST_BYTES)
        return await digestInThread(this.path(key));
      const hash = createHash('sha256');
      let bytes = 0;
      // One buffer read into again and again: no new memory per chunk for a file of any size.
      const file = await open(this.path(key), 'r');
      try {
        const buffer = Buffer.allocUnsafeSlow(DIGEST_CHUNK_BYTES);
        for (;;) {
          const { bytesRead } = await file.read(buffer, 0, buffer.length, null);
          if (bytesRead === 0) break;
          hash.update(buffer.subarray(0, bytesRead));
          bytes += bytesRead;
        }
      } finally {
        await file.close();
      }
      return { bytes, sha256: hash.digest('hex') };
    } catch (e) {
      throw this.error(e, key);
    }
  }

  /** Writes `key` through a hidden temporary file beside it (`place` fills it and moves it in). */
  private async viaTemp<T>(
    key: string,
    errorKey: string,
    place: (tmp: string, path: string) => Promise<T>,
  ): Promise<T> {
    const path = this.path(key);
    const tmp = join(dirname(path), `.${randomBytes(6).toString('hex')}.partial`);
    try {
      await mkdir(dirname(path), { recursive: true });
      return await place(tmp, path);
    } catch (e) {
      // Under a file (ENOTDIR) even removing fails: the write's own error is the one to tell.
      await rm(tmp, { force: true }).catch(() => {});
      throw this.error(e, errorKey);
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const dir = prefix.endsWith('/') ? prefix : prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const out: StoredObject[] = [];
    const walk = async (rel: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(this.path(rel), { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (e.name.endsWith('.partial')) continue;
        const key = `${rel}${e.name}`;
        if (e.isDirectory()) {
          if (`${key}/`.startsWith(prefix) || prefix.startsWith(`${key}/`)) await walk(`${key}/`);
        } else if (e.isFile() && key.startsWith(prefix)) {
          // A file removed between readdir and stat (another run's lock going) is not listed.
          const st = await stat(this.path(key)).catch(() => undefined);
          if (st !== undefined) out.push({ key, size: st.size, version: fileVersion(st) });
        }
      }
    };
    await walk(dir);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) await rm(this.path(key), { force: true });
  }

  private error(e: unknown, key: string): Error {
    if (e instanceof StoreError) return e;
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT') {
      return new StoreError('E_STORE_MISSING', `${this.root}${key}: not found`, 'check the path');
    }
    return new StoreError(
      'E_STORE',
      `${this.root}${key}: ${code ?? 'cannot be read or written'}`,
      'check that the folder exists and is writable',
    );
  }
}
