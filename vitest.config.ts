/**
 * Every test: `npm run test:all`, what CI runs (.ci/run). `npm test` runs the fast tier
 * (vitest.fast.config.ts). A test that needs ARX or Chromium guards itself with
 * test/helpers/requires.ts: skipped locally when missing, failing under CI.
 */
import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** What both tiers share. */
export const testOptions: NonNullable<ViteUserConfig['test']> = {
  include: ['test/**/*.test.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks',
};

export default defineConfig({
  test: { ...testOptions, reporters: ['default', './test/helpers/skips-reporter.ts'] },
});
