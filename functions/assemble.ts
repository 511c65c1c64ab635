/** The Assemble state (see src/pipeline/phases.ts `assemble`). */
import { assemble } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Assemble', assemble);
