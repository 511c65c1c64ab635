/** The CountShard state (see src/pipeline/phases.ts `countShard`). */
import { countShard } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('CountShard', countShard);
