/**
 * The local engine's workers go to waiting items in turn; a background item (an input shard's
 * verification slice) takes a worker only once other work has been quiet for a moment, so that
 * it does not hold back the next map's items, which come just after the last one's end.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { optimizesInPlace, WorkerDispatch } from '../../src/pipeline/state-pool.ts';

describe('WorkerDispatch', () => {
  let clock = 0;
  const now = () => clock;
  const advance = async (ms: number) => {
    clock += ms;
    await vi.advanceTimersByTimeAsync(ms);
  };
  beforeEach(() => {
    clock = 1000;
    vi.useFakeTimers();
  });
  afterEach(() => vi.useRealTimers());

  /** Which of the promises have settled, by their names. */
  async function settled(promises: Record<string, Promise<string>>): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const [name, p] of Object.entries(promises)) {
      const got = await Promise.race([p, Promise.resolve('pending')]);
      out[name] = got;
    }
    return out;
  }

  it('gives a worker back to the next item at once', async () => {
    const dispatch = new WorkerDispatch(['w0'], 50, now);
    expect(await dispatch.take(false)).toBe('w0');
    const waiting = dispatch.take(false);
    expect(await settled({ waiting })).toEqual({ waiting: 'pending' });
    dispatch.give('w0', false);
    expect(await waiting).toBe('w0');
  });

  it('holds a background item while the next map is about to start, and lets the map take the worker', async () => {
    const dispatch = new WorkerDispatch(['w0'], 50, now);
    expect(await dispatch.take(false)).toBe('w0');
    const slice = dispatch.take(true);
    await advance(200);
    // The map's last item ends: the background slice does not take the worker yet ...
    dispatch.give('w0', false);
    await advance(10);
    expect(await settled({ slice })).toEqual({ slice: 'pending' });
    // ... the next map's first item comes and takes it.
    expect(await dispatch.take(false)).toBe('w0');
    await advance(500);
    expect(await settled({ slice })).toEqual({ slice: 'pending' });
    // Its end, and quiet after it: then the slice.
    dispatch.give('w0', false);
    await advance(49);
    expect(await settled({ slice })).toEqual({ slice: 'pending' });
    await advance(1);
    expect(await slice).toBe('w0');
  });

  it('lets the items that come with a background one go first', async () => {
    // A state that starts background work starts other work beside it, a moment later.
    const dispatch = new WorkerDispatch(['w0'], 50, now);
    await advance(1000);
    const slice = dispatch.take(true);
    await advance(5);
    const apply = dispatch.take(false);
    expect(await settled({ slice, apply })).toEqual({ slice: 'pending', apply: 'w0' });
    await advance(300);
    dispatch.give('w0', false);
    await advance(50);
    expect(await slice).toBe('w0');
  });

  it('runs background items back to back once other work is quiet', async () => {
    const dispatch = new WorkerDispatch(['w0'], 50, now);
    const first = dispatch.take(true);
    const second = dispatch.take(true);
    expect(await settled({ first })).toEqual({ first: 'pending' });
    await advance(50);
    expect(await first).toBe('w0');
    await advance(100);
    dispatch.give('w0', true);
    // The work before was background too, and long enough: the next one needs no wait.
    expect(await settled({ second })).toEqual({ second: 'w0' });
  });
});

describe('optimizesInPlace', () => {
  it('compiles in the workers when they fill the cores, unless the user chose', () => {
    expect(optimizesInPlace(2, 2, [], '')).toBe(true);
    expect(optimizesInPlace(4, 2, [], '')).toBe(true);
    // Cores to spare: V8's background compiler has one.
    expect(optimizesInPlace(4, 8, [], '')).toBe(false);
    expect(optimizesInPlace(2, 2, ['--concurrent-recompilation'], '')).toBe(false);
    expect(optimizesInPlace(2, 2, [], '--no-concurrent-recompilation')).toBe(false);
  });
});
