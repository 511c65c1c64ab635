import { describe, expect, it } from 'vitest';
import { nodeFlagSet } from '../../src/util/node-flags.ts';

describe('nodeFlagSet', () => {
  it('finds a V8 flag on the command line or in NODE_OPTIONS, in either spelling, negated or not', () => {
    expect(nodeFlagSet(['initial-heap-size'], ['--initial-heap-size=64'])).toBe(true);
    expect(nodeFlagSet(['initial-old-space-size'], ['--initial_old_space_size=64'])).toBe(true);
    expect(nodeFlagSet(['initial-old-space-size'], [], ' --initial-old-space-size=256 ')).toBe(true);
    expect(nodeFlagSet(['concurrent-recompilation'], ['--no-concurrent-recompilation'])).toBe(true);
    expect(nodeFlagSet(['concurrent-recompilation'], ['--concurrent_recompilation'])).toBe(true);
  });

  it('takes no other flag for it, nor a longer name that starts alike', () => {
    expect(nodeFlagSet(['initial-heap-size'], [])).toBe(false);
    expect(nodeFlagSet(['initial-heap-size'], ['--enable-source-maps'], '--max-old-space-size=4096')).toBe(
      false,
    );
    expect(nodeFlagSet(['concurrent-recompilation'], ['--concurrent-recompilation-queue-length=8'])).toBe(
      false,
    );
    expect(nodeFlagSet(['concurrent-recompilation'], ['concurrent-recompilation'])).toBe(false);
  });
});
