/** The Verify state (src/pipeline/states/verify.ts). */
import { verify } from '../src/pipeline/states/verify.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Verify', verify);
