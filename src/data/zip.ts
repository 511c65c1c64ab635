/**
 * A ZIP archive (an .xlsx workbook) read from its file descriptor: its central directory, then
 * one entry at a time, inflated in small pieces (fflate's streaming inflater) and handed on as it
 * comes, so a large part never sits in memory whole. Every size the archive declares is a claim:
 * the central directory lies inside the file, each entry's bytes lie inside the file, an entry
 * inflates to exactly the size it declares (never past it: the inflater stops one piece later)
 * and to its declared CRC-32, and a declared size is held to XLSX_MAX_PART_RATIO times its
 * compressed size before anything is inflated.
 */
import { crc32 } from 'node:zlib';
import { Inflate } from 'fflate';
import { thousands } from '../util/format.ts';
import { type InputFile, readAt } from './input.ts';
import { XLSX_MAX_PART_RATIO, XLSX_RATIO_FLOOR } from './limits.ts';

/** One file of the archive, as its central directory declares it. */
export interface ZipEntry {
  /** The name as stored (`xl/worksheets/sheet1.xml`). */
  readonly name: string;
  /** 0 stored, 8 deflated. */
  readonly method: number;
  readonly flags: number;
  readonly crc: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly localOffset: number;
}

/** Why an archive cannot be read; the caller words it for its format. */
export class ZipError extends Error {
  constructor(
    /** `corrupt`: not a ZIP or its bytes contradict it; `ratio`: over XLSX_MAX_PART_RATIO; `method`: not stored or deflated; `encrypted`. */
    readonly kind: 'corrupt' | 'ratio' | 'method' | 'encrypted',
    message: string,
  ) {
    super(message);
  }
}

const EOCD = 0x06054b50;
const EOCD64_LOCATOR = 0x07064b50;
const EOCD64 = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
/** Compressed bytes pushed to the inflater at a time: what one push can inflate to is bounded by about 1,032 times this. */
const PIECE_BYTES = 64 * 1024;
/** Largest central directory read (a workbook's holds a few dozen entries). */
const MAX_DIRECTORY_BYTES = 64 * 1024 * 1024;

export class ZipArchive {
  /** Entries by name, lower-cased (part names in a package are case-insensitive). */
  private readonly entries = new Map<string, ZipEntry>();

  constructor(
    private readonly path: string,
    private readonly input: InputFile,
  ) {
    this.readDirectory();
  }

  /** The entry named `name` (any case, without a leading `/`), or undefined. */
  entry(name: string): ZipEntry | undefined {
    return this.entries.get(name.replace(/^\/+/, '').toLowerCase());
  }

  private readDirectory(): void {
    const size = this.input.size;
    if (size < 22) throw new ZipError('corrupt', 'not a ZIP archive: too short');
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailLength);
    readAt(this.path, this.input, tail, size - tailLength);
    let at = -1;
    for (let k = tailLength - 22; k >= 0; k--) {
      if (tail.readUInt32LE(k) === EOCD) {
        at = k;
        break;
      }
    }
    if (at < 0) throw new ZipError('corrupt', 'no end of central directory (not a ZIP archive)');
    let count = tail.readUInt16LE(at + 10);
    let dirSize = tail.readUInt32LE(at + 12);
    let dirOffset = tail.readUInt32LE(at + 16);
    if (count === 0xffff || dirSize === 0xffffffff || dirOffset === 0xffffffff) {
      // ZIP64: the locator just before the record points to the 64-bit record.
      const loc = at - 20;
      if (loc < 0 || tail.readUInt32LE(loc) !== EOCD64_LOCATOR) {
        throw new ZipError('corrupt', 'a ZIP64 archive without its locator');
      }
      const recordAt = Number(tail.readBigUInt64LE(loc + 8));
      if (!(recordAt >= 0 && recordAt + 56 <= size))
        throw new ZipError('corrupt', 'the ZIP64 record lies outside the file');
      const record = Buffer.alloc(56);
      readAt(this.path, this.input, record, recordAt);
      if (record.readUInt32LE(0) !== EOCD64)
        throw new ZipError('corrupt', 'no ZIP64 end of central directory');
      count = safe(record.readBigUInt64LE(32));
      dirSize = safe(record.readBigUInt64LE(40));
      dirOffset = safe(record.readBigUInt64LE(48));
    }
    if (!(dirOffset + dirSize <= size) || dirSize > MAX_DIRECTORY_BYTES || count * 46 > dirSize) {
      throw new ZipError(
        'corrupt',
        `the central directory (${thousands(count)} entries, bytes ${thousands(dirOffset)}–${thousands(dirOffset + dirSize)}) does not fit the file's ${thousands(size)} bytes`,
      );
    }
    const dir = Buffer.alloc(dirSize);
    readAt(this.path, this.input, dir, dirOffset);
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (p + 46 > dirSize || dir.readUInt32LE(p) !== CENTRAL) {
        throw new ZipError('corrupt', `central directory entry ${i + 1} is cut or malformed`);
      }
      const flags = dir.readUInt16LE(p + 8);
      const method = dir.readUInt16LE(p + 10);
      const crc = dir.readUInt32LE(p + 16);
      let compressedSize = dir.readUInt32LE(p + 20);
      let entrySize = dir.readUInt32LE(p + 24);
      const nameLength = dir.readUInt16LE(p + 28);
      const extraLength = dir.readUInt16LE(p + 30);
      const commentLength = dir.readUInt16LE(p + 32);
      let localOffset = dir.readUInt32LE(p + 42);
      const end = p + 46 + nameLength + extraLength + commentLength;
      if (end > dirSize) throw new ZipError('corrupt', `central directory entry ${i + 1} is cut`);
      const name = dir.toString('utf8', p + 46, p + 46 + nameLength);
      // ZIP64 sizes and offset, each present when its 32-bit field is all ones.
      for (let x = p + 46 + nameLength; x + 4 <= p + 46 + nameLength + extraLength; ) {
        const id = dir.readUInt16LE(x);
        const length = dir.readUInt16LE(x + 2);
        if (id === 0x0001) {
          let f = x + 4;
          const next = () => {
            if (f + 8 > x + 4 + length) throw new ZipError('corrupt', `entry ${i + 1}'s ZIP64 field is cut`);
            const v = safe(dir.readBigUInt64LE(f));
            f += 8;
            return v;
          };
          if (entrySize === 0xffffffff) entrySize = next();
          if (compressedSize === 0xffffffff) compressedSize = next();
          if (localOffset === 0xffffffff) localOffset = next();
        }
        x += 4 + length;
      }
      this.entries.set(name.replace(/^\/+/, '').toLowerCase(), {
        name,
        method,
        flags,
        crc,
        compressedSize,
        size: entrySize,
        localOffset,
      });
      p = end;
    }
  }

  /**
   * Inflates `entry`, yielding its bytes in pieces as they come. Checks before inflating that
   * the entry is stored or deflated and not encrypted, that its bytes lie inside the file and
   * that its declared size is within the ratio limit; then that it inflates to exactly its
   * declared size (stopping one piece past it) and CRC-32.
   */
  *inflate(entry: ZipEntry): Generator<Uint8Array, void, undefined> {
    if (entry.flags & 1) throw new ZipError('encrypted', `${entry.name} is encrypted`);
    if (entry.method !== 0 && entry.method !== 8) {
      throw new ZipError(
        'method',
        `${entry.name} is compressed with method ${entry.method} (not stored or deflated)`,
      );
    }
    const { compressedSize, size } = entry;
    if (size > XLSX_RATIO_FLOOR && size > XLSX_MAX_PART_RATIO * compressedSize) {
      throw new ZipError(
        'ratio',
        `${entry.name} declares ${thousands(size)} bytes from ${thousands(compressedSize)} compressed (${Math.floor(size / Math.max(1, compressedSize))}×), over the limit of ${thousands(XLSX_MAX_PART_RATIO)}×`,
      );
    }
    const header = Buffer.alloc(30);
    if (entry.localOffset + 30 > this.input.size)
      throw new ZipError('corrupt', `${entry.name}'s local header lies outside the file`);
    readAt(this.path, this.input, header, entry.localOffset);
    if (header.readUInt32LE(0) !== LOCAL)
      throw new ZipError('corrupt', `${entry.name}'s local header is missing`);
    const start = entry.localOffset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    if (start + compressedSize > this.input.size) {
      throw new ZipError(
        'corrupt',
        `${entry.name}'s ${thousands(compressedSize)} compressed bytes from byte ${thousands(start)} lie outside the file's ${thousands(this.input.size)} bytes`,
      );
    }
    if (entry.method === 0 && compressedSize !== size) {
      throw new ZipError('corrupt', `${entry.name} is stored, but its sizes differ`);
    }
    let produced = 0;
    let crc = 0;
    let out: Uint8Array[] = [];
    const take = (chunk: Uint8Array) => {
      if (chunk.length === 0) return;
      produced += chunk.length;
      if (produced > size) {
        throw new ZipError(
          'corrupt',
          `${entry.name} inflates to more than the ${thousands(size)} bytes it declares`,
        );
      }
      crc = crc32(chunk, crc);
      out.push(chunk);
    };
    const inflater = entry.method === 8 ? new Inflate((chunk) => take(chunk)) : undefined;
    const piece = Buffer.allocUnsafeSlow(Math.min(PIECE_BYTES, Math.max(1, compressedSize)));
    try {
      if (compressedSize === 0) inflater?.push(new Uint8Array(0), true);
      for (let at = 0; at < compressedSize; ) {
        const n = Math.min(piece.length, compressedSize - at);
        const got = readAt(
          this.path,
          this.input,
          n === piece.length ? piece : piece.subarray(0, n),
          start + at,
        );
        if (got !== n) throw new ZipError('corrupt', `${entry.name} is cut short`);
        at += n;
        // A copy: the inflater keeps unread input across pushes.
        const bytes = new Uint8Array(piece.subarray(0, n));
        if (inflater) inflater.push(bytes, at === compressedSize);
        else take(bytes);
        const ready = out;
        out = [];
        yield* ready;
      }
    } catch (err) {
      if (err instanceof ZipError) throw err;
      // The inflater's own errors (invalid block, unexpected end): the bytes are not deflate.
      if (err instanceof Error && typeof (err as { code?: unknown }).code === 'number') {
        throw new ZipError('corrupt', `${entry.name}'s compressed bytes cannot be inflated`);
      }
      throw err;
    }
    yield* out;
    if (produced !== size) {
      throw new ZipError(
        'corrupt',
        `${entry.name} inflates to ${thousands(produced)} bytes, not the ${thousands(size)} it declares`,
      );
    }
    if (crc >>> 0 !== entry.crc >>> 0)
      throw new ZipError('corrupt', `${entry.name}'s CRC-32 does not match its bytes`);
  }

  /** A whole entry's bytes (for parts held whole: the workbook, its relationships, styles, shared strings). */
  readAll(entry: ZipEntry): Buffer {
    const out = Buffer.allocUnsafeSlow(entry.size);
    let at = 0;
    for (const chunk of this.inflate(entry)) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }
}

function safe(v: bigint): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipError('corrupt', 'a ZIP64 size is out of range');
  return Number(v);
}
