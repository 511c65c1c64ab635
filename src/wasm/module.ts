/**
 * Loads and compiles ppdp's WebAssembly core once per process. The module is tiny; each
 * kernel session gets its own instance (and memory), so sessions never share a layout. A
 * disposed grouping session hands its instance back for the next one (`acquireCore`):
 * its memory is grown and paged in already, which is most of a small session's cost.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import type { instantiate } from '../../build/ppdp.js';

/**
 * The core's exports, typed from the declaration the AssemblyScript compiler writes beside the
 * module (build/ppdp.d.ts, `bindings: raw` in asconfig.json): a kernel renamed, removed or
 * given other parameters in assembly/ fails type-checking where the wrappers call it.
 */
export type CoreExports = Awaited<ReturnType<typeof instantiate>>;

// The module's place relative to this file differs between the sources (src/wasm/) and the
// bundled CLI (dist/): look in both.
const CANDIDATES = ['../../build/ppdp.wasm', '../build/ppdp.wasm'];

let compiled: WebAssembly.Module | undefined;
let supplied: Uint8Array<ArrayBuffer> | undefined;

/**
 * Supplies the module's bytes instead of reading build/ppdp.wasm (a bundle that embeds the
 * module, e.g. the Lambda handlers: esbuild `loader: { '.wasm': 'binary' }`). Call before the
 * first kernel session.
 */
export function provideWasm(bytes: Uint8Array<ArrayBuffer>): void {
  supplied = bytes;
  compiled = undefined;
}

export function wasmPath(): string {
  for (const rel of CANDIDATES) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new Error('ppdp.wasm not found: run `npm run build` (npm install does it) to compile assembly/');
}

/**
 * Starts compiling the module on V8's background threads (a hundred milliseconds or so of
 * optimizing compilation on a slow machine), so that the first kernel session, which needs it
 * synchronously, usually finds it done. Call early, e.g. before reading the input.
 */
export function prewarmCore(): void {
  if (compiled || compiling) return;
  setFlagsFromString('--no-liftoff');
  compiling = WebAssembly.compile(supplied ?? readFileSync(wasmPath())).then(
    (module) => {
      compiled ??= module;
    },
    () => {}, // the synchronous compile reports any error
  );
}
let compiling: Promise<void> | undefined;

function compile(): WebAssembly.Module {
  if (!compiled) {
    // A long first call would otherwise run in the baseline tier (wasm has no OSR): compile
    // optimized up front.
    setFlagsFromString('--no-liftoff');
    compiled = new WebAssembly.Module(supplied ?? readFileSync(wasmPath()));
  }
  return compiled;
}

export function instantiateCore(): CoreExports {
  return new WebAssembly.Instance(compile(), {}).exports as unknown as CoreExports;
}

/** Instances handed back by finished sessions, each with how many leading bytes it promises are zero. */
const idle: { core: CoreExports; zeroFrom: number; zeroBytes: number }[] = [];
const IDLE_LIMIT = 2;
/** What an instance handed back may have of memory and still be kept, unless told otherwise. */
export const DEFAULT_RETAINED_BYTES = 64 * 1024 * 1024;
let retainedBytes = DEFAULT_RETAINED_BYTES;

/**
 * Keeps instances with up to `bytes` of memory for the next session. One machine sets it high:
 * a thread there runs session after session of about one size (a shard's), and paging a fresh
 * memory in can cost more than the session's work (on virtual machines where a page fault is
 * slow). A function sized to its state (a Lambda invocation) keeps the default, so that an
 * idle instance does not add to its peak. Returns the size kept before.
 */
export function retainCoresUpTo(bytes: number): number {
  const before = retainedBytes;
  retainedBytes = bytes;
  for (let i = idle.length - 1; i >= 0; i--)
    if (idle[i]!.core.memory.buffer.byteLength > bytes) idle.splice(i, 1);
  return before;
}

/**
 * Runs `work` keeping whatever instance its sessions hand back, of any size, for the next
 * session within it: one session's memory, already paged in, serves the next of about its size
 * (the Search state's merge, then its search), where a fresh instance would be paged in beside
 * the one let go. After it the retained size is as before, and an idle instance past it is let go.
 */
export async function keepingInstances<T>(work: () => Promise<T>): Promise<T> {
  const before = retainCoresUpTo(Number.POSITIVE_INFINITY);
  try {
    return await work();
  } finally {
    retainCoresUpTo(before);
  }
}

/** What one machine keeps: a session of a shard of 10⁶ rows over up to 23 columns. */
export const ONE_MACHINE_RETAINED_BYTES = 256 * 1024 * 1024;

/**
 * An instance for a session: a returned one if any (with the byte range it promises is
 * zero: `[zeroFrom, zeroFrom + zeroBytes)`), else a fresh one, whose memory is all zero.
 */
export function acquireCore(): { core: CoreExports; zeroFrom: number; zeroBytes: number } {
  return idle.pop() ?? { core: instantiateCore(), zeroFrom: 0, zeroBytes: Number.POSITIVE_INFINITY };
}

/** The memory of the instance the next session takes (acquireCore's), 0 when none is idle. */
export function nextIdleBytes(): number {
  return idle.at(-1)?.core.memory.buffer.byteLength ?? 0;
}

/**
 * Hands an instance back once its session is over; `zeroFrom`/`zeroBytes` name the range its
 * session left zeroed. Memory never shrinks, so few are kept, and none over the retained size.
 */
export function releaseCore(core: CoreExports, zeroFrom: number, zeroBytes: number): void {
  if (idle.length < IDLE_LIMIT && core.memory.buffer.byteLength <= retainedBytes)
    idle.push({ core, zeroFrom, zeroBytes });
}
