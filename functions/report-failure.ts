/** The ReportFailure state (see src/pipeline/phases.ts `reportFailure`). */
import { reportFailure } from '../src/pipeline/phases.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('ReportFailure', reportFailure);
