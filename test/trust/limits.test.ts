/**
 * Resource limits: an input that will not fit the memory budget fails before it is read; a
 * lattice over limits.maxLatticeNodes (default 10^7) fails before the search; a hierarchy with
 * thousands of levels (a mask over long values, or a file) fails before it is built.
 */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkInputColumns,
  checkInputFits,
  checkLatticeSize,
  DEFAULT_MAX_LATTICE_NODES,
  estimateMemory,
  MEMORY_ENV,
  memoryBudget,
} from '../../src/data/limits.ts';
import { InputError, LimitError, type PpdpError } from '../../src/errors.ts';
import { buildHierarchy } from '../../src/hierarchy/hierarchy.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { runCli, withEnv, writeResults } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const results: Record<string, unknown> = {};
afterAll(() => writeResults('limits', results));

async function limitError(fn: () => unknown): Promise<LimitError> {
  try {
    await fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LimitError);
    expect((e as LimitError).hint).toBeTruthy();
    return e as LimitError;
  }
  throw new Error('expected a LimitError');
}

describe('memory budget', () => {
  it('comes from --max-memory (the environment), else the spec, else the machine', () => {
    expect(
      memoryBudget({ limits: { maxMemoryMB: 512, maxLatticeNodes: undefined } }, { [MEMORY_ENV]: '64' }),
    ).toEqual({
      bytes: 64 * 1024 * 1024,
      source: '--max-memory 64',
    });
    expect(memoryBudget({ limits: { maxMemoryMB: 512, maxLatticeNodes: undefined } }, {}).source).toBe(
      'limits.maxMemoryMB = 512',
    );
    expect(memoryBudget({}, {})).toEqual({ bytes: totalmem(), source: "the machine's memory" });
  });

  it('rejects an input larger than the machine can hold before reading a byte of it', async () => {
    // A sparse file: as large as the machine's memory, costing no disk and no time to create.
    const path = join(dir, 'huge.csv');
    writeFileSync(path, '');
    truncateSync(path, totalmem());
    const e = await limitError(() => checkInputFits({ input: path, limits: undefined }, {}));
    expect(e.code).toBe('E_LIMIT_MEMORY');
    expect(e.message).toMatch(
      /^huge\.csv: releasing this \d+ MB input needs about \d+ MB, over the memory budget of \d+ MB \(the machine's memory\)$/,
    );
    expect(estimateMemory(totalmem())).toBeGreaterThan(totalmem());
    results.machineMemoryBytes = totalmem();
  });

  it('a release stops with the budget error before any work (library and CLI --max-memory)', async () => {
    const ws = adultWorkspace();
    const e = await withEnv({ [MEMORY_ENV]: '16' }, async () => {
      try {
        await releaseTo(ws.spec, join(dir, 'out-budget'));
      } catch (err) {
        return err as PpdpError;
      }
      throw new Error('expected an error');
    });
    expect(e.code).toBe('E_LIMIT_MEMORY');
    // Generalization reads in shards: admitted from what the shards read project, in the scan.
    expect(e.message).toMatch(
      /^the input's 30,162 rows \(projected from the first 30,162\) hold .*: ScanPiece would need about \d+ MB, over the 14 MB it may use \(nine tenths of 16 MB: --max-memory 16\)$/,
    );

    const out = join(dir, 'out-cli');
    // In this process the flag's environment variable is put back afterwards (a CLI process ends).
    const cli = (args: string[]) => withEnv({ [MEMORY_ENV]: '' }, () => runCli(args));
    const r = await cli(['release', ws.spec, '--out', out, '--max-memory', '16']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /ppdp: error: the input's 30,162 rows .* over the 14 MB it may use \(nine tenths of 16 MB: --max-memory 16\)/,
    );
    expect(r.stderr).toMatch(/hint: raise the budget/);

    const bad = await cli(['release', ws.spec, '--out', out, '--max-memory', 'lots']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/--max-memory must be a number of MB ≥ 1 \(got 'lots'\)/);
    results.memory = { budgetMB: 16, error: e.message };
  });

  it('a generous budget lets the release run', async () => {
    const ws = adultWorkspace(300);
    ws.editSpec((s) => (s.limits = { maxMemoryMB: 4096 }));
    const { report } = await releaseTo(ws.spec, join(dir, 'out-ok'));
    expect(report.verification.verified).toBe(true);
  });
});

describe('lattice size', () => {
  it('defaults to 10^7 nodes and names every quasi-identifier', async () => {
    expect(DEFAULT_MAX_LATTICE_NODES).toBe(10_000_000);
    const qis = Array.from({ length: 7 }, (_, i) => ({ name: `q${i + 1}`, height: 10 }));
    const e = await limitError(() => checkLatticeSize('/x/release.json', qis));
    expect(e.code).toBe('E_LIMIT_LATTICE');
    expect(e.message).toBe(
      'release.json: the generalization lattice has 19,487,171 nodes (levels per quasi-identifier: ' +
        'q1 11, q2 11, q3 11, q4 11, q5 11, q6 11, q7 11), over the limit of 10,000,000 (limits.maxLatticeNodes)',
    );
    expect(() => checkLatticeSize('/x/release.json', qis.slice(0, 6))).not.toThrow();
  });

  it('also for lattices far beyond 2^53 nodes (no overflow to a small number)', async () => {
    const qis = Array.from({ length: 40 }, (_, i) => ({ name: `q${i}`, height: 100 }));
    expect((await limitError(() => checkLatticeSize('release.json', qis))).code).toBe('E_LIMIT_LATTICE');
  });

  it('Adult under limits.maxLatticeNodes = 1000: k-minimal stops before the search, optimal searches best-effort', async () => {
    const ws = adultWorkspace(300);
    ws.editSpec((s) => {
      s.limits = { maxLatticeNodes: 1000 };
      (s.method as Record<string, unknown>).strategy = 'k-minimal';
    });
    const out = join(dir, 'out-lattice');
    const e = await limitError(async () => await releaseTo(ws.spec, out));
    expect(e.message).toMatch(/the generalization lattice has 4,320 nodes .*over the limit of 1,000/);
    ws.editSpec((s) => {
      (s.method as Record<string, unknown>).strategy = 'optimal';
    });
    const { report } = await releaseTo(ws.spec, out);
    expect(report.verification.verified).toBe(true);
    // A best-effort search states why it stopped (here it may prove its node optimal).
    expect(report.generalization?.stoppedBy).toBeDefined();
    results.lattice = { adultNodes: 4320, limitTried: 1000, error: e.message };
  });
});

describe('column names of a schema or a sheet', () => {
  it('refuses one starting with a byte order mark, which an Arrow reader would drop, naming its column', () => {
    expect(() =>
      checkInputColumns('book.xlsx sheet "T" row 1', ['age', 'zip'], 'the header row'),
    ).not.toThrow();
    let error: unknown;
    try {
      checkInputColumns('book.xlsx sheet "T" row 1', ['age', '\uFEFFzip'], 'the header row');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).code).toBe('E_INPUT_NAME');
    expect((error as InputError).message).toMatch(
      /^book\.xlsx sheet "T" row 1: the name of column 2 starts with/,
    );
  });
});

describe('hierarchy size', () => {
  const column = (values: string[]) => ({
    name: 'code',
    dictionary: values,
    codes: Int32Array.from(values, (_, i) => i),
  });

  it('a mask over a 100,000-character value is refused before its rows are built', async () => {
    const e = await limitError(() =>
      buildHierarchy(column(['1'.repeat(100_000), '2'.repeat(100_000)]), {
        kind: 'mask',
        direction: 'right',
      }),
    );
    expect(e.code).toBe('E_LIMIT_HIERARCHY');
    expect(e.message).toMatch(
      /^mask builder: the hierarchy of 'code' would have 100,001 levels for 2 values/,
    );
  });

  it('a hierarchy file of 5,000 levels is refused; a wide but shallow one is fine', async () => {
    const deep = join(dir, 'deep.csv');
    writeFileSync(
      deep,
      `a;${Array.from({ length: 4999 }, (_, l) => `a${l}`).join(';')};*\nb;${Array.from({ length: 4999 }, (_, l) => `b${l}`).join(';')};*\n`,
    );
    const e = await limitError(() => buildHierarchy(column(['a', 'b']), { kind: 'file', path: deep }));
    expect(e.message).toMatch(/^deep\.csv: the hierarchy of 'code' has 5,001 levels for 2 values/);

    // Huge fan-out (20,000 values under one label) is a normal hierarchy: built, not refused.
    const values = Array.from({ length: 20_000 }, (_, i) => `v${i}`);
    const wide = join(dir, 'wide.csv');
    writeFileSync(wide, `${values.map((v) => `${v};group;*`).join('\n')}\n`);
    const h = buildHierarchy(column(values), { kind: 'file', path: wide });
    expect(h.height).toBe(2);
    expect(h.labels[1]).toEqual(['group']);
  });
});
