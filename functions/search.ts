/** The Search state (src/pipeline/states/search.ts). */
import { search } from '../src/pipeline/states/search.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Search', search);
