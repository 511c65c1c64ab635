/**
 * The fast tier, `npm test`: unit, golden and quick end-to-end tests. `npm run test:all`
 * (vitest.config.ts, what CI runs) runs every test. The rule, by path:
 *
 * - test/e2e/, test/trust/ and test/arx/ are slow (releases through the CLI, the state machine
 *   on a local S3 server, fault and kill runs, ARX run live);
 * - a file named `*browser*.test.ts` opens a page in headless Chromium;
 * - SLOW lists the other files measured above about 10 s each (2 cores, loaded).
 *
 * A new file falls under the rule of its folder and name; one that takes longer goes in SLOW.
 * Both tiers skip (CI: fail) a suite whose tool is missing: test/helpers/requires.ts.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { testOptions } from './vitest.config.ts';

const SLOW_FOLDERS = ['test/e2e/', 'test/trust/', 'test/arx/'];
const SLOW = new Set([
  'test/cli/init-wide.test.ts',
  'test/data/shards.test.ts',
  'test/data/xlsx.test.ts',
  'test/docs/bench-help.test.ts',
  'test/docs/decide-and-reuse.test.ts',
  'test/docs/docs.test.ts',
  'test/explore/search.test.ts',
  'test/infra/bundle.test.ts',
  'test/infra/synth.test.ts',
  'test/kernels/grouping.test.ts',
  'test/methods/anatomy.test.ts',
  'test/methods/best-effort.test.ts',
  'test/methods/best-effort-trajectory.test.ts',
  'test/methods/cell-suppression.test.ts',
  // Its suite against ARX run live takes 2 minutes: moved to test/arx/, the rest can be fast.
  'test/methods/differential-privacy.test.ts',
  'test/methods/mondrian.test.ts',
  'test/methods/randomization-release.test.ts',
  'test/methods/slicing.test.ts',
  'test/pipeline/csv-ranges.test.ts',
]);

export const isSlow = (file: string): boolean =>
  SLOW_FOLDERS.some((folder) => file.startsWith(folder)) ||
  /browser[^/]*\.test\.ts$/.test(file) ||
  SLOW.has(file);

const ROOT = new URL('.', import.meta.url).pathname;
const testFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
const slow = testFiles('test').filter(isSlow).sort();

export default defineConfig({
  test: {
    ...testOptions,
    exclude: ['**/node_modules/**', ...slow],
    reporters: ['default', ['./test/helpers/skips-reporter.ts', { notRun: slow }]],
    // Two workers on two cores: vitest's default is one fewer than the cores.
    maxWorkers: 2,
  },
});
