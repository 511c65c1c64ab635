/** esbuild's binary loader embeds .wasm files as bytes (see infra/bundle.ts). */
declare module '*.wasm' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
