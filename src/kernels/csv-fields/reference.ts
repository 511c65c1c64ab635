/** The plain-TS reference of the CSV reader's plain rows (assembly/csv-fields.ts). */
import { CODED, type PlainRowsKernel, RAW } from './kernel.ts';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const HASH_SEED = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

export const tsPlainRows: PlainRowsKernel = ({ bytes, start, end: n, delimiter, kinds, most }) => {
  const width = kinds.length;
  // A row holds at least a byte a column (a delimiter or its line break).
  const cap = Math.max(0, Math.min(most, Math.floor((n - start) / width)));
  const coded = kinds.flatMap((k) =>
    k === CODED
      ? [{ starts: new Int32Array(cap), ends: new Int32Array(cap), hashes: new Int32Array(cap) }]
      : [],
  );
  const rawCells = kinds.flatMap((k) => (k === RAW ? [[] as Uint8Array[]] : []));
  const slot = kinds.map((k, c) => kinds.slice(0, c).filter((x) => x === k).length);
  let rows = 0;
  let pos = start;
  while (rows < most) {
    const rowStart = pos;
    const cells: Uint8Array[] = [];
    let c = 0;
    let whole = false;
    // Whether a field is quoted or holds a byte other than a space or a tab: a row without
    // (an empty row, as a spreadsheet exports its used range) is left to the reader.
    let value = false;
    while (pos < n && c < width) {
      const kind = kinds[c]!;
      let s = pos;
      let e: number;
      let h = HASH_SEED;
      let ended = -1;
      let cell: Uint8Array | undefined;
      if (bytes[pos] === QUOTE) {
        // A quoted field on one line: its value between the quotes, `""` a quote in it.
        s = pos + 1;
        const unquoted: number[] = [];
        let q = s;
        let closed = false;
        while (q < n && bytes[q] !== LF && bytes[q] !== CR) {
          if (bytes[q] === QUOTE) {
            if (q + 1 >= n) break;
            if (bytes[q + 1] !== QUOTE) {
              closed = true;
              break;
            }
            q++;
          }
          unquoted.push(bytes[q]!);
          q++;
        }
        const escaped = unquoted.length !== q - s;
        if (!closed || (escaped && kind === CODED)) break;
        e = q;
        pos = q + 1;
        const b = bytes[pos]!;
        if (b === delimiter || b === LF) ended = b;
        else if (b === CR && pos + 1 < n && bytes[pos + 1] === LF) ended = LF;
        else break;
        cell = Uint8Array.from(unquoted);
        value = true;
      } else {
        while (pos < n) {
          const b = bytes[pos]!;
          if (b === delimiter || b === LF) {
            ended = b;
            break;
          }
          if (b === CR) {
            if (pos + 1 >= n) break;
            if (bytes[pos + 1] === LF) {
              ended = LF;
              break;
            }
          }
          pos++;
        }
        if (ended < 0) break;
        e = pos;
        cell = bytes.subarray(s, e);
        for (let p = s; p < e && !value; p++) value = bytes[p] !== SPACE && bytes[p] !== TAB;
      }
      if (kind === CODED) {
        for (let p = s; p < e; p++) h = Math.imul(h ^ bytes[p]!, FNV_PRIME);
        const out = coded[slot[c]!]!;
        out.starts[rows] = s;
        out.ends[rows] = e;
        out.hashes[rows] = h;
      } else if (kind === RAW) cells[slot[c]!] = cell;
      c++;
      if (ended === LF) {
        pos += bytes[pos] === CR ? 2 : 1;
        whole = c === width;
        break;
      }
      pos++;
    }
    if (!whole || !value) {
      pos = rowStart;
      break;
    }
    rawCells.forEach((column, k) => {
      column.push(cells[k]!);
    });
    rows++;
  }
  const raw = rawCells.map((column) => {
    const offsets = new Int32Array(rows + 1);
    column.forEach((cell, r) => {
      offsets[r + 1] = offsets[r]! + cell.length;
    });
    const out = new Uint8Array(offsets[rows]!);
    column.forEach((cell, r) => {
      out.set(cell, offsets[r]!);
    });
    return { offsets, bytes: out };
  });
  return {
    rows,
    end: pos,
    coded: coded.map((c) => ({
      starts: c.starts.subarray(0, rows),
      ends: c.ends.subarray(0, rows),
      hashes: c.hashes.subarray(0, rows),
    })),
    raw,
  };
};
