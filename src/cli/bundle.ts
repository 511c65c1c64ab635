/**
 * The entry of the bundled CLI and library (dist/ppdp.cjs): the WASM core embedded in the
 * bundle (no file to find at run time), then the command itself and the library API
 * (src/api.ts, the package's `exports`), and the entry of the local engine's worker threads.
 * bin/ppdp.mjs loads the bundle with V8's code
 * cache (dist/ppdp.cache), written by `npm run build` after a warm-up release.
 */
import { isMainThread, workerData } from 'node:worker_threads';
import wasm from '../../build/ppdp.wasm';
import { serveStates } from '../pipeline/state-worker.ts';
import { provideWasm } from '../wasm/module.ts';

provideWasm(wasm);
// The bundle is also the local engine's state worker (src/pipeline/state-pool.ts).
if (!isMainThread && workerData?.ppdpStates) serveStates(workerData.ppdpStates);

export { PpdpError, release } from '../api.ts';
export { main } from './main.ts';
