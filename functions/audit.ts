/** The Audit state (src/pipeline/states/audit.ts). */
import { audit } from '../src/pipeline/states/audit.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('Audit', audit);
