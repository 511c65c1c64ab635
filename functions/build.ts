/** The Build state (src/pipeline/states/build.ts). */
import { build } from '../src/pipeline/states/build.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Build', build);
