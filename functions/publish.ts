/** The Publish state (src/pipeline/states/publish.ts). */
import { publish } from '../src/pipeline/states/publish.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Publish', publish);
