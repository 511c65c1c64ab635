/**
 * Loads and compiles ppdp's WebAssembly core once per process. The module is tiny; each
 * kernel session gets its own instance (and memory), so sessions never share a layout.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

export interface CoreExports {
  readonly memory: WebAssembly.Memory;
  groupBy(
    cols: number,
    stride: number,
    n: number,
    m: number,
    maps: number,
    radix: number,
    counts: number,
    groupOf: number,
    sizes: number,
    keys: number,
    packed: number,
    table: number,
    capacity: number,
  ): number;
  histogram(
    groupOf: number,
    values: number,
    counts: number,
    n: number,
    groups: number,
    width: number,
    out: number,
  ): void;
}

// The module's place relative to this file differs between the sources (src/wasm/) and the
// bundled CLI (dist/): look in both.
const CANDIDATES = ['../../build/ppdp.wasm', '../build/ppdp.wasm'];

let compiled: WebAssembly.Module | undefined;

export function wasmPath(): string {
  for (const rel of CANDIDATES) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new Error('ppdp.wasm not found: run `npm run build` (npm install does it) to compile assembly/');
}

function compile(): WebAssembly.Module {
  if (!compiled) {
    // A long first call would otherwise run in the baseline tier (wasm has no OSR): compile
    // optimized up front.
    setFlagsFromString('--no-liftoff');
    compiled = new WebAssembly.Module(readFileSync(wasmPath()));
  }
  return compiled;
}

export function instantiateCore(): CoreExports {
  return new WebAssembly.Instance(compile(), {}).exports as unknown as CoreExports;
}
