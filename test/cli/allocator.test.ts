/**
 * When `ppdp release` starts itself again with glibc's allocator tuned: on Linux, for a local
 * input of the given size or more, unless GLIBC_TUNABLES is set already. The restart itself
 * (signals passed on, the child's environment) is run in test/e2e/cli-cleanup.test.ts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  HUGE_PAGES_INPUT_BYTES,
  heapFlags,
  INITIAL_HEAP_MB,
  TUNABLES,
  TUNABLES_ENV,
  tunablesFor,
  tunedAllocatorFor,
} from '../../src/cli/allocator.ts';
import { tunedRestart } from '../../src/cli/launch.ts';
import { LARGE_INPUT_BYTES } from '../../src/data/limits.ts';
import { ADULT_DIR } from '../helpers/adult.ts';

const spec = join(ADULT_DIR, 'release.json');
const env = { PATH: process.env.PATH };

describe.runIf(process.platform === 'linux')('the tuned allocator for large releases', () => {
  it('restarts for an input of the threshold or more, not for a smaller one', () => {
    expect(LARGE_INPUT_BYTES).toBe(64_000_000);
    expect(tunedAllocatorFor(spec, LARGE_INPUT_BYTES, env)).toBeUndefined(); // Adult: about 4 MB
    expect(tunedAllocatorFor(spec, 1_000_000, env)).toBe(TUNABLES);
  });

  it('puts large blocks on huge pages only for the largest inputs', () => {
    expect(tunablesFor(HUGE_PAGES_INPUT_BYTES - 1)).toBe(TUNABLES);
    expect(tunablesFor(HUGE_PAGES_INPUT_BYTES)).toBe(`glibc.malloc.hugetlb=1:${TUNABLES}`);
    expect(TUNABLES).not.toContain('hugetlb');
  });

  it('leaves a GLIBC_TUNABLES the user set (or its own restart) alone', () => {
    expect(tunedAllocatorFor(spec, 1_000_000, { ...env, [TUNABLES_ENV]: '' })).toBeUndefined();
    expect(
      tunedAllocatorFor(spec, 1_000_000, { ...env, [TUNABLES_ENV]: 'glibc.malloc.arena_max=2' }),
    ).toBeUndefined();
  });

  it("is decided from the release command's own arguments, and not at all when they do not parse", () => {
    // A small input, --help, a second spec, an unknown option: no restart (the CLI says what is wrong).
    for (const args of [[spec], [spec, '--help'], [spec, spec], [spec, '--bogus'], []])
      expect(tunedRestart(args), args.join(' ')).toBeUndefined();
  });

  it("sizes the child's V8 heap, unless the user sized it (node's flags or NODE_OPTIONS)", () => {
    const sized = [`--initial-heap-size=${INITIAL_HEAP_MB}`];
    expect(heapFlags([])).toEqual(sized);
    expect(heapFlags(['--enable-source-maps'], '--max-old-space-size=4096')).toEqual(sized);
    expect(heapFlags(['--initial-heap-size=64'])).toEqual([]);
    expect(heapFlags(['--initial_old_space_size=64'])).toEqual([]);
    expect(heapFlags([], ' --initial-old-space-size=256 ')).toEqual([]);
  });

  it('does not restart when in doubt: the release then reports the problem itself', () => {
    expect(tunedAllocatorFor(join(ADULT_DIR, 'missing.json'), 1, env)).toBeUndefined();
    expect(tunedAllocatorFor('s3://bucket/inbox/x/release.json', 1, env)).toBeUndefined();
  });
});
