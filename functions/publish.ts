/** The Publish state (see src/pipeline/phases.ts `publish`). */
import { publish } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Publish', publish);
