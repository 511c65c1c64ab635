/**
 * Arrow IPC streams whose metadata lies: a real stream written with apache-arrow,
 * then its record batches' (or dictionary batches') declared lengths, field nodes or buffers
 * replaced, the bodies kept as they are.
 */

import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { Table, tableFromArrays, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import {
  type BufferRegion,
  FieldNode,
  Message,
  RecordBatch as RecordBatchHeader,
} from 'apache-arrow/ipc/metadata/message';
import { parquetWriteBuffer } from 'hyparquet-writer';

/** Columns of strings, by name. */
export interface Columns {
  readonly names: readonly string[];
  readonly columns: readonly (readonly string[])[];
}

/** A CSV's (`;`-separated, header first) first `rows` rows as columns of strings. */
export function csvColumns(csv: string, rows: number): Columns {
  const lines = csv.split(/\r?\n/);
  const names = lines[0]!.split(';');
  const columns = names.map(() => [] as string[]);
  for (let r = 1; r <= rows; r++) {
    const cells = lines[r]!.split(';');
    for (const [c, v] of cells.entries()) columns[c]!.push(v);
  }
  return { names, columns };
}

/** The columns as an Arrow IPC stream: dictionary columns (`utf8: true`: Utf8 ones). */
export function arrowStream({ names, columns }: Columns, utf8 = false): Uint8Array {
  if (!utf8) {
    return tableToIPC(
      tableFromArrays(Object.fromEntries(names.map((n, c) => [n, [...columns[c]!]]))),
      'stream',
    );
  }
  const table = new Table(
    Object.fromEntries(names.map((n, c) => [n, vectorFromArray([...columns[c]!], new Utf8())])),
  );
  return tableToIPC(table, 'stream');
}

export interface IpcMessage {
  /** The message's metadata, decoded. */
  message: Message;
  /** Its body's bytes (a copy: patch freely). */
  body: Uint8Array;
}

/** The messages of an IPC stream. */
export function ipcMessages(bytes: Uint8Array): IpcMessage[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: IpcMessage[] = [];
  for (let at = 0; at + 8 <= bytes.length; ) {
    const length = view.getInt32(at + 4, true);
    if (length === 0) break;
    const message = Message.decode(bytes.subarray(at + 8, at + 8 + length));
    const start = at + 8 + length;
    out.push({ message, body: bytes.slice(start, start + message.bodyLength) });
    at = start + message.bodyLength;
  }
  return out;
}

/** An IPC stream of `messages` (metadata re-encoded, bodies as they are), with its end marker. */
export function ipcStream(messages: IpcMessage[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const { message, body } of messages) {
    const meta = Message.encode(message);
    const framed = new Uint8Array((8 + meta.length + 7) & ~7);
    const view = new DataView(framed.buffer);
    view.setInt32(0, -1, true);
    view.setInt32(4, framed.length - 8, true);
    framed.set(meta, 8);
    parts.push(framed, body);
  }
  parts.push(new Uint8Array([255, 255, 255, 255, 0, 0, 0, 0]));
  return Buffer.concat(parts);
}

/** A record batch header with another length, field nodes or buffers. */
export function batchHeader(
  h: RecordBatchHeader,
  change: { length?: number; nodes?: FieldNode[]; buffers?: BufferRegion[] },
): RecordBatchHeader {
  return new RecordBatchHeader(
    change.length ?? h.length,
    change.nodes ?? h.nodes,
    change.buffers ?? h.buffers,
    h.compression,
  );
}

/** The stream with every record batch's header changed by `patch`. */
export function lyingBatches(
  bytes: Uint8Array,
  patch: (h: RecordBatchHeader, body: Uint8Array) => RecordBatchHeader,
): Uint8Array {
  return ipcStream(
    ipcMessages(bytes).map(({ message, body }) => {
      if (!message.isRecordBatch()) return { message, body };
      const header = patch(message.header() as RecordBatchHeader, body);
      return { message: Message.from(header, message.bodyLength), body };
    }),
  );
}

/** Every record batch declares `rows` rows, and (with `nodes`) so does each of its columns. */
export function declaring(rows: number, nodes: boolean) {
  return (h: RecordBatchHeader) =>
    batchHeader(h, {
      length: rows,
      ...(nodes ? { nodes: h.nodes.map((n) => new FieldNode(rows, n.nullCount)) } : {}),
    });
}

/**
 * A Parquet bomb: the columns as Parquet, `column`'s values each `inflate` bytes of one
 * repeated letter, BROTLI-compressed into one page that inflates far past 1,000×.
 */
export function brotliBomb({ names, columns }: Columns, column: string, inflate = 4 << 20): Uint8Array {
  return new Uint8Array(
    parquetWriteBuffer({
      columnData: names.map((name, c) => ({
        name,
        data: name === column ? columns[c]!.map((_, i) => `${i}${'a'.repeat(inflate)}`) : [...columns[c]!],
        type: 'STRING' as const,
        nullable: false,
        ...(name === column ? { codec: 'BROTLI' as const, encoding: 'PLAIN' as const } : {}),
      })),
      pageSize: 64 << 20,
      compressors: {
        BROTLI: (b: Uint8Array) =>
          new Uint8Array(brotliCompressSync(b, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } })),
      },
    }),
  );
}
