/**
 * Sealed work files: every object a state writes into a run's work area carries a checksum
 * of its bytes, and every read checks it, so a work file changed or cut short after it was
 * written is refused where it is read (StoreError E_WORK_CORRUPT) instead of feeding the
 * states after it. One wrapper over the work area's store does it for every state.
 *
 * - Most work files (plan.json, rows/, counts/, flags/, search.json, route/, scatter/,
 *   verify/, verified.json, timings/, …) end with a trailer: 8 bytes `PPDPCRC1`, then the CRC-32 of the
 *   bytes before it and their length. `get` checks the trailer and returns the bytes without it.
 *   A CRC, not a digest: these files never leave the work area, the check is against accidents
 *   (a file changed, cut short, or another's), and the bulk of a run's bytes passes through them
 *   several times (a SHA-256 costs about 2.5 times as much; neither stops a writer who reseals).
 * - Files that must stay byte-exact have their seal beside them, under `seals/`, with their
 *   SHA-256: the staged release files (they are published as they are, and their SHA-256 runs
 *   on to the manifest) and the spec bundle (loaded by path). `get` and `digest` (a stream, for
 *   a reader that then reads them by path) check it. A local file's seal also records its
 *   version (inode, size, modification time): `digest` of a file still at that version gives
 *   the seal's SHA-256 without hashing its bytes again (the verification slices and the audit
 *   each read every staged file; a file rewritten or replaced has another version and is
 *   hashed). Publish compares every published file with the manifest: a local one linked to its
 *   staged file, still at the version sealed, by that seal; any other by its SHA-256, read back.
 * - Plain: the Distributed Maps' item lists (pieces.json, shards.json, parts.json), which
 *   Step Functions itself reads as JSON arrays, and the run's lock.json and error.json, which
 *   other runs and people read. An item carries only an index: each state checks it against the
 *   sealed plan.json, and the states that gather results read one file per index of the plan,
 *   so a list changed or cut short fails there (an index out of range, a missing file).
 */
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import {
  bodyPieces,
  type Digest,
  joinKey,
  type Location,
  type PutBody,
  type Store,
  type StoredObject,
  StoreError,
  utf8,
} from './store.ts';

const MAGIC = Buffer.from('PPDPCRC1');
/** The magic, the CRC-32 and the body's length (two 32-bit words), little-endian. */
const TRAILER = MAGIC.length + 12;
/** Work files that stay plain JSON (see above). */
const PLAIN = new Set(['pieces.json', 'shards.json', 'parts.json', 'lock.json', 'error.json']);
/** Work folders whose files stay byte-exact, sealed beside them. */
const EXACT = ['staging/', 'bundle/'];
const SEALS = 'seals/';

type Kind = 'plain' | 'trailer' | 'exact';

interface Seal {
  format: 'ppdp-seal/1';
  bytes: number;
  sha256: string;
  /** A local file's version when sealed (its inode, size and modification time). */
  version?: string;
}

const sha256 = (bytes: Uint8Array): Buffer => createHash('sha256').update(bytes).digest();

/** The trailer of a work file whose bytes are `pieces`, in order. */
function trailerOf(pieces: readonly Uint8Array[]): Buffer {
  let crc = 0;
  let length = 0;
  for (const piece of pieces) {
    crc = crc32(piece, crc);
    length += piece.length;
  }
  const trailer = Buffer.allocUnsafe(TRAILER);
  MAGIC.copy(trailer);
  trailer.writeUInt32LE(crc >>> 0, MAGIC.length);
  trailer.writeUInt32LE(length >>> 0, MAGIC.length + 4);
  trailer.writeUInt32LE(Math.floor(length / 2 ** 32), MAGIC.length + 8);
  return trailer;
}

/** The work area at `loc` (a key ending in `/`), its files sealed. */
export function sealWork(loc: Location): Location {
  return {
    store: loc.store instanceof SealedStore ? loc.store : new SealedStore(loc.store, loc.key),
    key: loc.key,
  };
}

/** The store under a sealed work area's (the store itself when it is not sealed). */
export function unsealed(store: Store): Store {
  return store instanceof SealedStore ? store.inner : store;
}

export class SealedStore implements Store {
  readonly root: string;

  constructor(
    readonly inner: Store,
    /** The work area's key prefix (ending in `/`): keys outside it pass through plain. */
    readonly area: string,
  ) {
    this.root = inner.root;
    this.local = inner.root === 'file:///';
  }

  /** Whether the work area is local files, whose seals record the file's version (see `digest`). */
  private readonly local: boolean;

  async get(key: string): Promise<Uint8Array> {
    const kind = this.kind(key);
    const bytes = await this.inner.get(key);
    if (kind === 'trailer') return this.unseal(key, bytes);
    if (kind === 'exact') {
      const sum = sha256(bytes);
      await this.checkSeal(key, { bytes: bytes.length, sha256: sum.toString('hex') });
    }
    return bytes;
  }

  /** Ranges of sealed files cannot be checked: only plain ones are read in ranges. */
  async getRange(key: string, start: number, end: number, version?: string): Promise<Uint8Array> {
    if (this.kind(key) !== 'plain') throw new Error(`${this.root}${key}: a sealed work file is read whole`);
    return this.inner.getRange(key, start, end, version);
  }

  async head(key: string): Promise<number | undefined> {
    return (await this.stat(key))?.size;
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    const o = await this.inner.stat(key);
    return o === undefined ? undefined : this.asRead(o);
  }

  /** A stored object as `get` returns it: a trailer-sealed file's size without its trailer. */
  private asRead(o: StoredObject): StoredObject {
    return this.kind(o.key) === 'trailer' ? { ...o, size: Math.max(0, o.size - TRAILER) } : o;
  }

  async put(key: string, body: PutBody): Promise<void> {
    const kind = this.kind(key);
    if (kind === 'plain') return this.inner.put(key, body);
    const pieces = bodyPieces(body);
    // The trailer as a last piece: the bytes are not copied to be joined to it.
    if (kind === 'trailer') return this.inner.put(key, [...pieces, trailerOf(pieces)]);
    const hash = createHash('sha256');
    for (const piece of pieces) hash.update(piece);
    const sum = hash.digest();
    // The file, then its seal: a reader between the two finds no seal and refuses.
    await this.inner.put(key, pieces.length === 1 ? pieces[0]! : pieces);
    const bytes = pieces.reduce((n, piece) => n + piece.length, 0);
    const version = this.local ? (await this.inner.stat(key))?.version : undefined;
    const seal: Seal = {
      format: 'ppdp-seal/1',
      bytes,
      sha256: sum.toString('hex'),
      ...(version ? { version } : {}),
    };
    await this.inner.put(this.sealKey(key), `${JSON.stringify(seal)}\n`);
  }

  async putIfAbsent(key: string, body: string): Promise<boolean> {
    if (this.kind(key) !== 'plain')
      throw new Error(`${this.root}${key}: a sealed work file is not created exclusively`);
    return this.inner.putIfAbsent(key, body);
  }

  async copy(from: string, to: string, sha?: string): Promise<void> {
    if (this.kind(from) !== 'plain' || this.kind(to) !== 'plain')
      throw new Error(`${this.root}${from}: sealed work files are not copied inside the work area`);
    return this.inner.copy(from, to, sha);
  }

  async digest(key: string): Promise<Digest> {
    const kind = this.kind(key);
    if (kind === 'trailer') {
      const bytes = await this.get(key);
      return { bytes: bytes.length, sha256: sha256(bytes).toString('hex') };
    }
    if (kind !== 'exact') return this.inner.digest(key);
    const seal = await this.readSeal(key);
    // The local file the seal was written for, as it was then: the bytes sealed, not hashed again.
    if (seal.version !== undefined && (await this.inner.stat(key))?.version === seal.version)
      return { bytes: seal.bytes, sha256: seal.sha256 };
    const d = await this.inner.digest(key);
    this.matchSeal(key, seal, d);
    return d;
  }

  /**
   * The seal of the byte-exact file at `key` when `version` is the local version the seal
   * recorded: that file (or a hard link to it) unchanged since it was sealed. Else undefined.
   */
  async sealedAt(key: string, version: string | undefined): Promise<Digest | undefined> {
    if (version === undefined || this.kind(key) !== 'exact') return undefined;
    const seal = await this.readSeal(key);
    return seal.version === version ? { bytes: seal.bytes, sha256: seal.sha256 } : undefined;
  }

  async list(prefix: string): Promise<StoredObject[]> {
    return (await this.inner.list(prefix)).map((o) => this.asRead(o));
  }

  async delete(keys: readonly string[]): Promise<void> {
    const seals = keys.filter((k) => this.kind(k) === 'exact').map((k) => this.sealKey(k));
    await this.inner.delete([...keys, ...seals]);
  }

  /**
   * A byte-exact work file's size and SHA-256, as read,
   * against its seal. @throws StoreError E_WORK_CORRUPT
   */
  private async checkSeal(key: string, d: Digest): Promise<void> {
    this.matchSeal(key, await this.readSeal(key), d);
  }

  /** A byte-exact work file's seal. @throws StoreError E_WORK_CORRUPT when it has none, or it is unreadable */
  private async readSeal(key: string): Promise<Seal> {
    const bytes = await this.inner.get(this.sealKey(key)).catch((e: unknown) => {
      if ((e as StoreError).code === 'E_STORE_MISSING') throw this.corrupt(key, 'it has no seal');
      throw e;
    });
    let seal: Seal | undefined;
    try {
      seal = JSON.parse(utf8(bytes)) as Seal;
    } catch {
      // reported below
    }
    if (seal?.format !== 'ppdp-seal/1') throw this.corrupt(key, 'its seal is unreadable');
    return seal;
  }

  /** @throws StoreError E_WORK_CORRUPT when the size or SHA-256 read (`d`) is not the seal's */
  private matchSeal(key: string, seal: Seal, d: Digest): void {
    if (seal.bytes !== d.bytes) throw this.corrupt(key, `${d.bytes} bytes, sealed with ${seal.bytes}`);
    if (seal.sha256 !== d.sha256) throw this.corrupt(key, 'its SHA-256 differs from its seal');
  }

  private unseal(key: string, bytes: Uint8Array): Uint8Array {
    return unsealTrailer(bytes, `${this.root}${key}`);
  }

  private kind(key: string): Kind {
    if (!key.startsWith(this.area)) return 'plain';
    const rel = key.slice(this.area.length);
    if (PLAIN.has(rel) || rel.startsWith(SEALS)) return 'plain';
    return EXACT.some((p) => rel.startsWith(p)) ? 'exact' : 'trailer';
  }

  private sealKey(key: string): string {
    return joinKey(this.area, SEALS, key.slice(this.area.length));
  }

  private corrupt(key: string, why: string): StoreError {
    return corruptWork(`${this.root}${key}`, why);
  }
}

/**
 * The bytes of a work file sealed with a trailer (`sealed`, as stored at `where`), without it.
 * @throws StoreError E_WORK_CORRUPT
 */
export function unsealTrailer(sealed: Uint8Array, where: string): Uint8Array {
  const at = sealed.length - TRAILER;
  if (at < 0 || !MAGIC.equals(sealed.subarray(at, at + MAGIC.length)))
    throw corruptWork(where, 'its seal is missing: cut short or overwritten');
  const body = sealed.subarray(0, at);
  if (!trailerOf([body]).equals(sealed.subarray(at)))
    throw corruptWork(where, 'its CRC-32 or length differs from its seal');
  return body;
}

function corruptWork(where: string, why: string): StoreError {
  return new StoreError(
    'E_WORK_CORRUPT',
    `${where}: the work file is corrupt (${why})`,
    'the work file was changed or truncated after it was written; start the release again',
  );
}
