/**
 * The entry of the bundled CLI and library (dist/ppdp.cjs): the WASM core embedded in the
 * bundle (no file to find at run time), then the command itself and the library API
 * (src/api.ts, the package's `exports`). bin/ppdp.mjs loads the bundle with V8's code
 * cache (dist/ppdp.cache), written by `npm run build` after a warm-up release.
 */
import wasm from '../../build/ppdp.wasm';
import { provideWasm } from '../wasm/module.ts';

provideWasm(wasm);

export { PpdpError, release } from '../api.ts';
export { main } from './main.ts';
