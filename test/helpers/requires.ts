/**
 * Tests that need something outside the repository: ARX's jars (and java/javac 17) or headless
 * Chromium. `requires('arx').describe(...)` is `describe` when the resource is present. When it is
 * missing the suite's body is not even collected: locally it becomes one skipped test whose
 * reason the skips reporter (test/helpers/skips-reporter.ts) prints in one line at the end of the
 * run; under CI (`CI=true`) it becomes one failing test with the same reason, so CI cannot go
 * green by skipping.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'vitest';
import { findChromium } from './chromium.ts';

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test was skipped: what it needs and what would enable it. */
    needs?: string;
  }
}

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

/** ARX's jars: $ARX_LIB, else ../shared/peers/arx/lib beside the repository. */
export const ARX_LIB = process.env.ARX_LIB ?? resolve(ROOT, '../shared/peers/arx/lib');

export type Resource = 'arx' | 'chromium';

const onPath = (command: string): boolean =>
  spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).status === 0;

/** What is missing of a resource, with what would enable it; null when it is present. */
const MISSING: Record<Resource, () => string | null> = {
  arx: () =>
    !existsSync(ARX_LIB)
      ? `needs ARX's jars at ${process.env.ARX_LIB ? `ARX_LIB=${ARX_LIB}` : '../shared/peers/arx/lib'} (run in a checkout with ../shared beside it, or set ARX_LIB to the jars' folder)`
      : !onPath('javac') || !onPath('java')
        ? 'needs java and javac 17 on PATH for ARX (apt-get install -y openjdk-17-jdk-headless)'
        : null,
  chromium: () =>
    findChromium() === null
      ? 'needs headless Chromium on PATH (apt-get install -y chromium; .ci/run installs it)'
      : null,
};

const inCi = (): boolean => process.env.CI === 'true' || process.env.CI === '1';

type Body = () => unknown;

export interface Required {
  /** Whether every resource is present (for hooks outside the guarded suites). */
  readonly available: boolean;
  /** Why not, and what would enable it; null when available. */
  readonly reason: string | null;
  /** `describe`, or one skipped (locally) / failing (CI) test in its place. */
  describe(name: string, body: () => void): void;
  /** `it`, or the same test skipped (locally) / failing (CI). */
  it(name: string, body: Body, timeout?: number): void;
}

/** The suite and test functions for tests that need `resources`. */
export function requires(...resources: Resource[]): Required {
  const reasons = [...new Set(resources)].map((r) => MISSING[r]()).filter((r) => r !== null);
  const reason = reasons.length === 0 ? null : reasons.join('; ');
  if (reason === null) {
    return {
      available: true,
      reason,
      describe: (name, body) => describe(name, body),
      it: (name, body, timeout) => it(name, body as () => void, timeout),
    };
  }
  const fail = () => {
    throw new Error(`${reason} (CI=true: a test that needs it fails instead of skipping)`);
  };
  const placeholder = (name: string) =>
    inCi() ? it(name, fail) : it.skip(name, { meta: { needs: reason } }, () => {});
  return {
    available: false,
    reason,
    describe: (name) => describe(name, () => placeholder(reason)),
    it: (name) => placeholder(name),
  };
}
