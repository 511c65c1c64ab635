/** The Combine state (src/pipeline/states/combine.ts). */
import { combine } from '../src/pipeline/states/combine.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Combine', combine);
