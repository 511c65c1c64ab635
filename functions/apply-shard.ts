/** The ApplyShard state (src/pipeline/states/apply-shard.ts). */
import { applyShard } from '../src/pipeline/states/apply-shard.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('ApplyShard', applyShard);
