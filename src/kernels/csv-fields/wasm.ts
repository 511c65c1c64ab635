/**
 * The CSV reader's plain rows in the WASM core (assembly/csv-fields.ts): the bytes copied in,
 * the rows' fields read out as views of the instance's memory (read before the next session on
 * this thread). The same rows as the plain-TS loop (`tsPlainRows`, reference.ts).
 */
import { Regions, reserve } from '../../wasm/layout.ts';
import { acquireCore, releaseCore } from '../../wasm/module.ts';
import { CODED, type PlainRowsKernel, RAW } from './kernel.ts';

const HEADER_WORDS = 15;

export const wasmPlainRows: PlainRowsKernel = ({ bytes, start, end, delimiter, kinds, most }) => {
  const width = kinds.length;
  const count = Math.max(0, end - start);
  const codedColumns = kinds.filter((k) => k === CODED).length;
  const rawColumns = kinds.filter((k) => k === RAW).length;
  // A row holds at least a byte a column (a delimiter or its line break).
  const rows = Math.max(0, Math.min(most, Math.floor(count / width)));
  const layout = new Regions(HEADER_WORDS);
  const bytesAt = layout.place(Math.ceil(count / 4) + 2); // 8 bytes a copy may read past the end
  const kindsAt = layout.place(width);
  const slotsAt = layout.place(width);
  const startsAt = layout.place(codedColumns * rows);
  const endsAt = layout.place(codedColumns * rows);
  const hashesAt = layout.place(codedColumns * rows);
  const offsetsAt = layout.place(rawColumns * (rows + 1));
  const rawTable = layout.place(rawColumns);
  const writtenAt = layout.place(rawColumns);
  const rawAt = Array.from({ length: rawColumns }, () => layout.place(Math.ceil(count / 4) + 2));
  const { core } = acquireCore();
  try {
    reserve(core, layout.end);
    const memory = core.memory.buffer;
    const words = new Int32Array(memory);
    new Uint8Array(memory).set(bytes.subarray(start, start + count), bytesAt);
    const seen = [0, 0, 0];
    kinds.forEach((k, c) => {
      words[(kindsAt >> 2) + c] = k;
      words[(slotsAt >> 2) + c] = seen[k]!++;
    });
    rawAt.forEach((at, k) => {
      words[(rawTable >> 2) + k] = at;
      words[(writtenAt >> 2) + k] = 0;
    });
    words.set(
      [
        bytesAt,
        count,
        delimiter,
        width,
        kindsAt,
        slotsAt,
        rows,
        startsAt,
        endsAt,
        hashesAt,
        offsetsAt,
        rawTable,
        writtenAt,
        0,
        start,
      ],
      layout.state >> 2,
    );
    for (let k = 0; k < rawColumns; k++) words[(offsetsAt >> 2) + k * (rows + 1)] = 0;
    const got = core.csvFields(layout.state);
    const after = new Int32Array(core.memory.buffer)[(layout.state >> 2) + 13]!;
    const view = (at: number, k: number) => new Int32Array(core.memory.buffer, at + 4 * k * rows, got);
    const coded = Array.from({ length: codedColumns }, (_, k) => ({
      starts: view(startsAt, k),
      ends: view(endsAt, k),
      hashes: view(hashesAt, k),
    }));
    const raw = rawAt.map((at, k) => {
      const offsets = new Int32Array(core.memory.buffer, offsetsAt + 4 * k * (rows + 1), got + 1);
      return { offsets, bytes: new Uint8Array(core.memory.buffer, at, offsets[got]!) };
    });
    return { rows: got, end: start + after, coded, raw };
  } finally {
    releaseCore(core, 0, 0);
  }
};
