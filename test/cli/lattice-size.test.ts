/**
 * A lattice's size as init and release state it (latticeNodes): a lattice past 1.8e308 nodes
 * (1,000 columns of 5 levels) was "Infinity nodes" in init and "∞ nodes" in release's refusal.
 * Both name the first few of those columns and how many more, not all 1,000 in a line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initCommand } from '../../src/cli/init.ts';
import { checkLatticeSize } from '../../src/data/limits.ts';
import { LimitError } from '../../src/errors.ts';
import { latticeNodes } from '../../src/util/format.ts';
import { runCommand } from '../helpers/command.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-lattice-size-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('lattice sizes, as init and release state them', () => {
  it('states a size past 1.8e308 from its factors, as init and the release refusal both do', () => {
    const levels = Array<number>(1000).fill(5);
    expect(latticeNodes(levels)).toBe('9.33e+698 nodes');
    expect(latticeNodes([2, 3])).toBe('6 nodes');
    expect(latticeNodes([1])).toBe('1 node');
    expect(latticeNodes(Array<number>(30).fill(10))).toBe('1.00e+30 nodes');
    let error: unknown;
    try {
      checkLatticeSize(
        'w.json',
        levels.map((l, i) => ({ name: `c${i}`, height: l - 1 })),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).message).toContain('lattice has 9.33e+698 nodes');
    expect((error as LimitError).message).toContain(
      '(levels per quasi-identifier: c0 5, c1 5, c2 5, c3 5, c4 5, c5 5, c6 5, c7 5, c8 5, c9 5 and 990 more)',
    );
    expect((error as LimitError).message).not.toContain('c999');
  });

  it('init on 1,000 columns prints that size, never Infinity or ∞', () => {
    const header = Array.from({ length: 1000 }, (_, i) => `c${i}`);
    const rows = Array.from({ length: 6 }, (_, r) =>
      header.map((_, i) => String((r * 7 + i) % 50)).join(','),
    );
    const csv = join(dir, 'wide.csv');
    writeFileSync(csv, `${header.join(',')}\n${rows.join('\n')}\n`);
    const run = runCommand(() => initCommand([csv, '--out', join(dir, 'wide.json')]));
    expect(run.error).toBeUndefined();
    const out = run.stdout;
    expect(out).toContain('lattice: 9.33e+698 nodes');
    expect(out).not.toMatch(/Infinity|∞/);
    // Each column has its line; no other line lists them all.
    expect(out).toContain(
      `×5 each (intervals, height 4): ${header.slice(0, 20).join(', ')} and 980 more — ×9.33e+698 together`,
    );
    for (const line of out.split('\n')) expect(line.length, line.slice(0, 80)).toBeLessThan(300);
  });

  it('init names the first few of 1,000 columns holding formulas, not every one', () => {
    const header = Array.from({ length: 1000 }, (_, i) => `f${i}`);
    const rows = Array.from({ length: 6 }, (_, r) => header.map((_, i) => `=${(r + i) % 3}+x`).join(','));
    const csv = join(dir, 'formulas.csv');
    writeFileSync(csv, `${header.join(',')}\n${rows.join('\n')}\n`);
    const run = runCommand(() => initCommand([csv, '--out', join(dir, 'formulas.json')]));
    expect(run.error).toBeUndefined();
    expect(run.stdout).toContain(
      'format.escapeFormulas: true — f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 and 990 more hold text',
    );
    for (const line of run.stdout.split('\n')) expect(line.length, line.slice(0, 80)).toBeLessThan(300);
  });
});
