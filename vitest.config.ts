/**
 * Every test: `npm run test:all`, what CI runs (.ci/run). `npm test` runs the fast tier
 * (vitest.fast.config.ts). A test that needs ARX or Chromium guards itself with
 * test/helpers/requires.ts: skipped locally when missing, failing under CI.
 *
 * Two workers on two cores, the longest files started first (LONGEST), so that both workers
 * end near together. No test depends on the machine's speed: a fault lands at a point of the
 * work (test/e2e/faults.test.ts), not at a time, so a loaded machine changes the wall time only.
 */
import { relative } from 'node:path';
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** What both tiers share. */
export const testOptions: NonNullable<ViteUserConfig['test']> = {
  include: ['test/**/*.test.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks',
};

/**
 * The files that take longest (seconds, one worker, an idle machine), longest first. A file
 * not listed follows them in vitest's own order (by its last duration when cached, else size).
 */
export const LONGEST = [
  'test/e2e/faults.test.ts',
  'test/methods/differential-privacy.test.ts',
  'test/trust/interruption.test.ts',
  'test/e2e/start.test.ts',
  'test/docs/docs.test.ts',
];

/** Vitest's order, with the LONGEST files moved to its front in their listed order. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = LONGEST.indexOf(relative(f.project.config.root, f.moduleId));
      return i < 0 ? LONGEST.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    ...testOptions,
    reporters: ['default', './test/helpers/skips-reporter.ts'],
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
  },
});
