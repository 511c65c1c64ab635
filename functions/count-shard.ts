/** The CountShard state (src/pipeline/states/count-shard.ts). */
import { countShard } from '../src/pipeline/states/count-shard.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('CountShard', countShard);
