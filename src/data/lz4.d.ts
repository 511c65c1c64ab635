/** Types of hyparquet-compressors' LZ4 decompressors, imported alone (its index also loads a Snappy WASM module at import). */
declare module 'hyparquet-compressors/src/lz4.js' {
  /** Hadoop-framed LZ4 (Parquet's legacy LZ4), falling back to a raw block; into `outputLength` bytes. */
  export function decompressLz4(input: Uint8Array, outputLength: number): Uint8Array;
  /** A raw LZ4 block (Parquet's LZ4_RAW), into `outputLength` bytes. */
  export function decompressLz4Raw(input: Uint8Array, outputLength: number): Uint8Array;
}
