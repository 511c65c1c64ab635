/** The Build state (see src/pipeline/phases.ts `build`). */
import { build } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Build', build);
