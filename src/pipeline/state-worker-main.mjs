// A state worker's entry when ppdp runs from its TypeScript sources (tests, scripts): tsx
// compiles the sources in this thread. The bundle is its own entry (src/cli/bundle.ts).
import { register } from 'tsx/esm/api';

register();
const { workerData } = await import('node:worker_threads');
const { serveStates } = await import('./state-worker.ts');
serveStates(workerData.ppdpStates);
