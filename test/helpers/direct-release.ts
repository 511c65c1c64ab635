/**
 * A release through the direct engine with worker threads, as a process of its own: node exits
 * when nothing keeps its event loop alive, which an in-process test (vitest keeps the loop
 * alive) cannot show. Arguments: the spec and the output folder.
 */
import { executeRelease } from '../../src/pipeline/engine.ts';

const [spec, out] = process.argv.slice(2) as [string, string];
const { manifest } = await executeRelease(
  { spec, out, shards: 3 },
  { engine: 'direct', workers: 2, workerMinRows: 1 },
);
process.stdout.write(`published ${manifest.files.length} files\n`);
