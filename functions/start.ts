/** Starts a release's execution, one per run (src/pipeline/start.ts). */
import { type StartEvent, sfnFromEnv, startRelease } from '../src/pipeline/start.ts';
import { stateHandler } from './commons/state-handler.ts';

let client: ReturnType<typeof sfnFromEnv> | undefined;

export const handler = stateHandler('Start', async (event: StartEvent, env) => {
  const { sfn, stateMachineArn } = (client ??= sfnFromEnv());
  return startRelease(event, env, sfn, stateMachineArn);
});
