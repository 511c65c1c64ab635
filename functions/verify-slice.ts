/** The VerifySlice state (src/pipeline/states/verify-slice.ts). */
import { verifySlice } from '../src/pipeline/states/verify-slice.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('VerifySlice', verifySlice);
