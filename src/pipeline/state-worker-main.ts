/** A state worker's entry when ppdp runs from its TypeScript sources (the bundle is its own entry). */
import { workerData } from 'node:worker_threads';
import { serveStates } from './state-worker.ts';

serveStates(workerData.ppdpStates);
