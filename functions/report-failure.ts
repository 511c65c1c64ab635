/** The ReportFailure state (src/pipeline/states/report-failure.ts). */
import { reportFailure } from '../src/pipeline/states/report-failure.ts';
import { stateHandler } from './commons/runtime.ts';

export const handler = stateHandler('ReportFailure', reportFailure);
