/**
 * Bundles the Lambda handlers (functions/*.ts) with esbuild into one asset folder: ESM for
 * Node 22, shared code split into chunks, the WASM core embedded as bytes
 * (`loader: { '.wasm': 'binary' }`), the AWS SDK bundled at the version ppdp was tested with.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HANDLERS_DIR = `${ROOT}functions`;

/** The handler files' base names (one Lambda function each): plan, count-shard, … */
export function handlerNames(): string[] {
  return readdirSync(HANDLERS_DIR)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** Writes `<outdir>/<name>.mjs` per handler (plus shared chunks) and returns outdir. */
export function bundleHandlers(outdir = `${ROOT}dist/lambda`): string {
  buildSync({
    entryPoints: handlerNames().map((n) => `${HANDLERS_DIR}/${n}.ts`),
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    splitting: true,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    loader: { '.wasm': 'binary' },
    // Some CommonJS dependencies of the AWS SDK call require(): give them one.
    banner: {
      js: "import { createRequire as __ppdpRequire } from 'node:module'; const require = __ppdpRequire(import.meta.url);",
    },
    minify: false,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
    absWorkingDir: ROOT,
  });
  return outdir;
}
