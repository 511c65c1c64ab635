/**
 * Shards assembled from pieces coded against dictionaries of their own (a Parquet row group, a
 * file of a folder input): each piece's codes are mapped to one shared dictionary per column,
 * whose codes are given in order of first use, so the shards read exactly as one CSV of the
 * same rows would (same dictionaries, same codes, whatever the pieces or the shard size).
 */
import type { EncodedTable, RowOrigin } from './table.ts';

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
  /** Where the piece's rows come from, for messages: a file and its row of the piece's first row. */
  readonly origin?: { readonly source: string; readonly firstRow: number };
}

/** Collects pieces' rows into shards of `rowsPerShard` rows over shared dictionaries. */
export class ShardAssembler {
  readonly dictionaries: SharedDictionary[];
  private codes: Int32Array[];
  private rows = 0;
  private origins: RowOrigin[] = [];

  constructor(
    private readonly names: readonly string[],
    private readonly rowsPerShard: number,
    private readonly source: string,
    private readonly delimiter: string,
    /** Rows expected in all, when known: the first shard's arrays are sized once. */
    expected = 0,
  ) {
    this.dictionaries = names.map(() => new SharedDictionary());
    const capacity = Math.min(rowsPerShard, Math.max(expected, 1024));
    this.codes = names.map(() => new Int32Array(capacity));
  }

  /** Remaps for a new piece dictionary, one per column. */
  remaps(): Remap[] {
    return this.dictionaries.map((d) => new Remap(d));
  }

  /** Adds a piece's rows; yields each shard it completes. */
  *add(piece: Piece): Generator<EncodedTable, void, undefined> {
    for (let from = 0; from < piece.rowCount; ) {
      const n = Math.min(piece.rowCount - from, this.rowsPerShard - this.rows);
      this.reserve(this.rows + n);
      if (piece.origin) {
        this.origins.push({
          source: piece.origin.source,
          at: this.rows,
          firstRow: piece.origin.firstRow + from,
        });
      }
      for (let i = 0; i < this.names.length; i++) {
        const col = piece.columns[i]!;
        piece.remaps[i]!.apply(col.dictionary, col.codes, from, from + n, this.codes[i]!, this.rows);
      }
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
    const columns = this.names.map((name, i) => {
      const codes = this.codes[i]!;
      return {
        name,
        dictionary: this.dictionaries[i]!.values.slice(),
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
