/**
 * The entry of the bundled CLI (dist/ppdp.cjs): the WASM core embedded in the bundle (no file
 * to find at run time), then the command itself. bin/ppdp.mjs loads the bundle with V8's code
 * cache (dist/ppdp.cache), written by `npm run build` after a warm-up release.
 */
import wasm from '../../build/ppdp.wasm';
import { provideWasm } from '../wasm/module.ts';

provideWasm(wasm);

export { main } from './main.ts';
