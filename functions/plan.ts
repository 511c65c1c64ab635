/** The Plan state (see src/pipeline/phases.ts `plan`). */
import { plan } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Plan', plan);
