/** The ApplyShard state (see src/pipeline/phases.ts `applyShard`). */
import { applyShard } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('ApplyShard', applyShard);
