/** The Plan state (src/pipeline/states/plan.ts). */
import { plan } from '../src/pipeline/states/plan.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Plan', plan);
