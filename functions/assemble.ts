/** The Assemble state (src/pipeline/states/assemble.ts). */
import { assemble } from '../src/pipeline/states/assemble.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Assemble', assemble);
