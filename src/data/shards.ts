/**
 * Shards assembled from pieces (a Parquet row group, a file of a folder input), coded against
 * one dictionary per column whose codes are given in order of first use, so the shards read
 * exactly as one CSV of the same rows would (same dictionaries, same codes, whatever the pieces
 * or the shard size). A piece coded against a dictionary of its own is mapped to the shared one.
 */
import { concatRaw, type RawValues } from './raw.ts';
import type { EncodedColumn, EncodedTable, RowOrigin } from './table.ts';

/** Maps one piece dictionary's codes (the dictionary may grow by appending) to shared codes. */
export class Remap {
  private map = new Int32Array(0);

  constructor(private readonly shared: SharedDictionary) {}

  /** Writes the shared codes of `codes[from, to)` (indexes into `dictionary`) to `out` at `at`. */
  apply(
    dictionary: readonly string[],
    codes: Int32Array,
    from: number,
    to: number,
    out: Int32Array,
    at: number,
  ): void {
    if (this.map.length < dictionary.length) {
      const next = new Int32Array(dictionary.length).fill(-1);
      next.set(this.map);
      this.map = next;
    }
    const map = this.map;
    for (let r = from; r < to; r++) {
      const c = codes[r]!;
      let g = map[c]!;
      if (g < 0) g = map[c] = this.shared.code(dictionary[c]!);
      out[at + r - from] = g;
    }
  }
}

/** One column's dictionary across pieces: values in order of first use. */
export class SharedDictionary {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();

  code(value: string): number {
    let code = this.index.get(value);
    if (code === undefined) this.index.set(value, (code = this.values.push(value) - 1));
    return code;
  }
}

/** Rows of one piece: per column, its dictionary, codes and the remap to the shared codes. */
export interface Piece {
  readonly rowCount: number;
  readonly columns: readonly { readonly dictionary: readonly string[]; readonly codes: Int32Array }[];
  readonly remaps: readonly Remap[];
  /** Where the piece's rows come from, for messages: a file (and sheet) and its row of the piece's first row. */
  readonly origin?: Omit<RowOrigin, 'at'>;
}

/**
 * Collects rows into shards of `rowsPerShard` rows, coded against one dictionary per column whose
 * codes are given in order of first use: a shard's dictionaries are the values its rows and the
 * rows before use, so they are a prefix of the next shard's.
 */
export class ShardAssembler {
  /** Per column: the values by code (may run ahead of the rows added so far). */
  private readonly values: (readonly string[])[];
  private readonly shared: SharedDictionary[] = [];
  private codes: Int32Array[];
  /** Per column: the largest code added so far. */
  private readonly top: Int32Array;
  private rows = 0;
  private origins: RowOrigin[] = [];
  /** Per column given as bytes (addCoded), its rows since the last shard: slices of the pieces. */
  private readonly rawParts: (RawValues[] | undefined)[];

  constructor(
    private readonly names: readonly string[],
    private readonly rowsPerShard: number,
    private readonly source: string,
    private readonly delimiter: string,
    /** Rows expected in all, when known: the first shard's arrays are sized once. */
    expected = 0,
    /** Per column, the values by code of rows given to addCoded; without, add maps pieces to dictionaries of its own. */
    values?: (readonly string[])[],
  ) {
    if (values) this.values = values;
    else {
      this.shared = names.map(() => new SharedDictionary());
      this.values = this.shared.map((d) => d.values);
    }
    const capacity = Math.min(rowsPerShard, Math.max(expected, 1024));
    this.codes = names.map(() => new Int32Array(capacity));
    this.top = new Int32Array(names.length).fill(-1);
    this.rawParts = names.map(() => undefined);
  }

  /** Remaps for a new piece dictionary, one per column. */
  remaps(): Remap[] {
    return this.shared.map((d) => new Remap(d));
  }

  /** Adds a piece's rows, mapped to the shared dictionaries; yields each shard it completes. */
  add(piece: Piece): Generator<EncodedTable, void, undefined> {
    return this.fill(piece.rowCount, piece.origin, (i, from, to, out, at) => {
      const col = piece.columns[i]!;
      piece.remaps[i]!.apply(col.dictionary, col.codes, from, to, out, at);
      this.top[i] = this.shared[i]!.values.length - 1;
    });
  }

  /**
   * Adds rows already coded against the constructor's `values` (codes given in order of first
   * use), or, for a column kept as bytes, its rows' bytes; yields each shard they complete.
   */
  addCoded(
    codes: readonly (Int32Array | RawValues)[],
    rowCount: number,
  ): Generator<EncodedTable, void, undefined> {
    return this.fill(rowCount, undefined, (i, from, to, out, at) => {
      const src = codes[i]!;
      if (!(src instanceof Int32Array)) {
        // Bytes stay where they are until the shard is taken: its rows are a slice of them.
        const parts = (this.rawParts[i] ??= []);
        parts.push({ offsets: src.offsets.subarray(from, to + 1), bytes: src.bytes });
        return;
      }
      let top = this.top[i]!;
      for (let r = from; r < to; r++) if (src[r]! > top) top = src[r]!;
      this.top[i] = top;
      out.set(src.subarray(from, to), at);
    });
  }

  private *fill(
    rowCount: number,
    origin: Piece['origin'],
    copy: (column: number, from: number, to: number, out: Int32Array, at: number) => void,
  ): Generator<EncodedTable, void, undefined> {
    for (let from = 0; from < rowCount; ) {
      const n = Math.min(rowCount - from, this.rowsPerShard - this.rows);
      this.reserve(this.rows + n);
      if (origin) this.origins.push({ ...origin, at: this.rows, firstRow: origin.firstRow + from });
      for (let i = 0; i < this.names.length; i++) copy(i, from, from + n, this.codes[i]!, this.rows);
      this.rows += n;
      from += n;
      if (this.rows === this.rowsPerShard) yield this.take();
    }
  }

  /** The rows added since the last shard, if any. */
  finish(): EncodedTable | undefined {
    return this.rows > 0 ? this.take() : undefined;
  }

  private reserve(rows: number): void {
    if (rows <= this.codes[0]!.length) return;
    const capacity = Math.min(this.rowsPerShard, Math.max(rows, this.codes[0]!.length * 2));
    this.codes = this.codes.map((c) => {
      const next = new Int32Array(capacity);
      next.set(c.subarray(0, this.rows));
      return next;
    });
  }

  private take(): EncodedTable {
    const rows = this.rows;
    const columns = this.names.map((name, i): EncodedColumn => {
      const parts = this.rawParts[i];
      if (parts) {
        this.rawParts[i] = [];
        return { name, dictionary: [], codes: new Int32Array(0), raw: concatRaw(parts) };
      }
      const codes = this.codes[i]!;
      return {
        name,
        dictionary: this.values[i]!.slice(0, this.top[i]! + 1),
        codes: codes.length === rows ? codes : codes.slice(0, rows),
      };
    });
    // A full array was handed out: the next shard fills fresh ones.
    if (this.codes[0]!.length === rows) this.codes = this.names.map(() => new Int32Array(rows));
    const origins = this.origins;
    this.origins = [];
    this.rows = 0;
    return {
      source: this.source,
      rowCount: rows,
      columns,
      delimiter: this.delimiter,
      ...(origins.length > 0 ? { origins } : {}),
    };
  }
}
