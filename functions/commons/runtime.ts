/**
 * What every handler shares: the WASM core embedded in the bundle, then the state handler
 * (state-handler.ts) that runs a phase as a Lambda function.
 */
import wasm from '../../build/ppdp.wasm';
import { provideWasm } from '../../src/wasm/module.ts';

provideWasm(wasm);

export { lambdaEnv, stateHandler } from './state-handler.ts';
