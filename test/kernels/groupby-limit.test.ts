/**
 * The grouping kernel's memory past what one WebAssembly instance addresses (4 GiB): a region
 * of 2³¹ bytes or more (a classes × values histogram of a sensitive attribute of many values,
 * an amount) is refused with E_LIMIT_MEMORY before anything is written, never a "memory access
 * out of bounds" or a histogram cut short. The region sizes were rounded with a bitwise
 * operator, which wraps past 2³¹.
 */
import { describe, expect, it } from 'vitest';
import { LimitError } from '../../src/errors.ts';
import { Layout, wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';

describe('grouping kernel past 4 GiB', () => {
  it('a layout counts regions of 2³¹ bytes and more, and refuses one past 4 GiB', () => {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 });
    const layout = new Layout(memory, 2);
    const first = layout.reserve(2 ** 31 + 4);
    const second = layout.reserve(8);
    expect(second - first).toBe(2 ** 31 + 8);
    layout.reserve(2 ** 32);
    expect(() => layout.commit()).toThrow(LimitError);
    // Refused before growing: the memory is as it was.
    expect(memory.buffer.byteLength).toBe(65536);
  });

  it("a sensitive attribute's histogram past 4 GiB fails with E_LIMIT_MEMORY, naming its size", () => {
    const session = wasmGroupingKernel.open({ columns: [Int32Array.of(0, 1)], domains: [2] }, [
      [Int32Array.of(0, 1)],
    ]);
    try {
      const { groupOf } = session.group(null);
      for (const width of [2 ** 29, 2 ** 30 + 1]) {
        let error: unknown;
        try {
          session.histogram(groupOf, 2, Int32Array.of(0, 1), width);
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(LimitError);
        expect((error as LimitError).code).toBe('E_LIMIT_MEMORY');
        expect((error as Error).message).toContain(
          `${width.toLocaleString('en')} values in each of 2 classes`,
        );
      }
      // A histogram that fits is still counted.
      expect(Array.from(session.histogram(groupOf, 2, Int32Array.of(0, 1), 3))).toEqual([1, 0, 0, 0, 1, 0]);
    } finally {
      session.dispose();
    }
  });
});
