/** The Search state (see src/pipeline/phases.ts `search`). */
import { search } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Search', search);
