#!/usr/bin/env node
// The ppdp command: runs the bundled CLI that `npm install` (prepare → build) produces.
//
// The bundle is compiled from V8's code cache when one matches (dist/ppdp.cache, written by
// `npm run build` after a warm-up release): a cold start then skips parsing and compiling
// most of the bundle. Any mismatch (another Node version, other flags) only means a normal
// compile. The flags are set first because the cache is only valid under the same flags.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';

// Baseline-compile functions on first call (a one-shot command runs most code once or a
// few times), and optimize WASM up front (see src/wasm/module.ts).
setFlagsFromString('--always-sparkplug');
setFlagsFromString('--no-liftoff');

// A large release starts again at once with a tuned allocator (src/cli/launch.ts, a small
// bundle of its own): deciding it here spares loading the CLI's bundle only to start anew.
const launch = fileURLToPath(new URL('../dist/launch.cjs', import.meta.url));
if (process.argv[2] === 'release' && existsSync(launch)) {
  const restart = createRequire(import.meta.url)(launch).tunedRestart(process.argv.slice(3));
  if (restart) await restart; // never settles: this process exits with the child's code
}

const bundle = fileURLToPath(new URL('../dist/ppdp.cjs', import.meta.url));
const cache = fileURLToPath(new URL('../dist/ppdp.cache', import.meta.url));
if (!existsSync(bundle)) {
  process.stderr.write(
    'ppdp: not built yet. Run `npm install` (or `npm run build`) in the ppdp folder first.\n',
  );
  process.exit(1);
}
const writeCache = process.env.PPDP_WRITE_CODE_CACHE === '1';
const source = readFileSync(bundle, 'utf8');
const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  cachedData: !writeCache && existsSync(cache) ? readFileSync(cache) : undefined,
});
if (process.env.PPDP_DEBUG_CACHE) process.stderr.write(`code cache rejected: ${script.cachedDataRejected}\n`);
const module = { exports: {} };
script.runInThisContext()(
  module.exports,
  createRequire(bundle),
  module,
  bundle,
  fileURLToPath(new URL('../dist/', import.meta.url)),
);
process.exitCode = await module.exports.main(process.argv.slice(2));
if (writeCache) {
  // After a run: the cache then holds the functions that run compiled, not just the top level.
  writeFileSync(`${cache}.tmp`, script.createCachedData());
  renameSync(`${cache}.tmp`, cache);
}
