/** The Verify state (see src/pipeline/phases.ts `verify`). */
import { verify } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Verify', verify);
