/**
 * Admission of a sharded release: the shards read so far project each state's need for the
 * whole input (distinct values, distinct quasi-identifier tuples) against the memory of the
 * function or machine that runs it; a release that would not fit is refused in the scan (or in
 * Combine, for the whole input) with the setting to change, one that fits is not.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ShardedAdmission, type StateBudgets } from '../../src/data/admission.ts';
import { LAMBDA_MEMORY_ENV, STATE_MEMORY_ENV, stateBudgets } from '../../src/data/limits.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { LimitError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { Random } from '../../src/util/random.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const MiB = 2 ** 20;
const budget = (mb: number) => ({ bytes: mb * MiB, source: `${mb} MB`, hint: 'raise it' });
const budgets = (mb: number): StateBudgets => ({ Plan: budget(mb), shard: budget(mb), Search: budget(mb) });

/**
 * Consecutive shards of a table of `rows` rows with two QIs of `qiDomain` values each and a
 * text column of 40-byte values drawn from `textDomain`: dictionaries grow as a reader's do.
 */
function* shards(rows: number, perShard: number, qiDomain: number, textDomain: number) {
  const random = new Random(7);
  const dicts = [new Map<string, number>(), new Map<string, number>(), new Map<string, number>()];
  for (let first = 0; first < rows; first += perShard) {
    const n = Math.min(perShard, rows - first);
    const codes = dicts.map(() => new Int32Array(n));
    for (let r = 0; r < n; r++) {
      const cells = [
        `a${random.below(qiDomain)}`,
        `b${random.below(qiDomain)}`,
        `note ${String(random.below(textDomain)).padStart(34, '0')}`,
      ];
      cells.forEach((v, c) => {
        const d = dicts[c]!;
        let code = d.get(v);
        if (code === undefined) d.set(v, (code = d.size));
        codes[c]![r] = code;
      });
    }
    const table: EncodedTable = {
      source: 'table.csv',
      rowCount: n,
      delimiter: ',',
      progress: (first + n) / rows,
      columns: ['a', 'b', 'note'].map((name, c) => ({
        name,
        dictionary: [...dicts[c]!.keys()],
        codes: codes[c]!,
      })),
    };
    yield table;
  }
}

describe('admission of a sharded release', () => {
  it('counts distinct tuples within 3 % and projects them for the whole input', () => {
    const admission = new ShardedAdmission(new Set(['a', 'b']), 50_000, budgets(1_000_000));
    const all = [...shards(400_000, 50_000, 600, 10)];
    const first = admission.observe(all[0]!)!;
    // Two QIs of 600 values: 360,000 combinations, of which 400,000 draws hit about 240,000.
    expect(first.rows).toBe(400_000);
    let last = first;
    for (const s of all.slice(1)) last = admission.observe(s)!;
    const expected = 360_000 * (1 - Math.exp(-400_000 / 360_000));
    expect(Math.abs(last.tuples - expected) / expected).toBeLessThan(0.03);
    // Early projections err on the large side, never far below the end.
    expect(first.tuples).toBeGreaterThan(0.97 * expected);
  });

  it('refuses a many-valued text column that would not fit, after the second shard, naming the fix', () => {
    const admission = new ShardedAdmission(new Set(['a', 'b']), 100_000, budgets(300));
    const read = shards(1_000_000, 100_000, 20, 1e9);
    const [one, two] = [read.next().value, read.next().value];
    expect(() => admission.observe(one!)).not.toThrow(); // one shard's overestimate alone never refuses
    let error: unknown;
    try {
      admission.observe(two!);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LimitError);
    expect(error).toMatchObject({ code: 'E_LIMIT_MEMORY' });
    const { message, hint } = error as LimitError;
    expect(message).toMatch(/1,000,000 rows \(projected from the first 200,000\)/);
    expect(message).toMatch(
      /Plan would need about \d+ MB, over the 270 MB it may use \(nine tenths of 300 MB: 300 MB\)/,
    );
    expect(hint).toMatch(/"identifying"/);
    expect(message).not.toMatch(/note 0/); // counts, never values
  });

  it("admits 10^8 near-unique tuples to a Search of Lambda's 10,240 MB, and refuses 1.2·10^8", () => {
    // Two shards of distinct (a, b) tuples, read as the first part of a table of `rows` rows.
    const near = (rows: number) => {
      const admission = new ShardedAdmission(new Set(['a', 'b']), 200_000, {
        ...budgets(3_008),
        Search: budget(10_240),
      });
      for (let s = 0; s < 2; s++) {
        const n = 200_000;
        const a = Int32Array.from({ length: n }, (_, r) => r % 20_000);
        const b = Int32Array.from({ length: n }, (_, r) => Math.floor((s * n + r) / 20_000));
        admission.observe({
          source: 'table.csv',
          rowCount: n,
          delimiter: ',',
          progress: ((s + 1) * n) / rows,
          columns: [
            { name: 'a', dictionary: Array.from({ length: 20_000 }, (_, i) => `a${i}`), codes: a },
            { name: 'b', dictionary: Array.from({ length: 2 * (s + 1) * 10 }, (_, i) => `b${i}`), codes: b },
          ],
        });
      }
    };
    expect(() => near(100_000_000)).not.toThrow();
    expect(() => near(120_000_000)).toThrow(
      /Search would need about \d+ MB, over the 9216 MB it may use \(nine tenths of 10240 MB/,
    );
  });

  it('admits the same table when the text column has few values', () => {
    const admission = new ShardedAdmission(new Set(['a', 'b']), 100_000, budgets(400));
    for (const s of shards(1_000_000, 100_000, 20, 50)) admission.observe(s);
  });

  it("deployed, takes each function's memory as the stack set it, with the setting to change", () => {
    const env = {
      [LAMBDA_MEMORY_ENV]: '3008',
      [STATE_MEMORY_ENV]: JSON.stringify({ CountShard: 512, ApplyShard: 576, Search: 3008 }),
    };
    const b = stateBudgets({}, env);
    expect(b.Plan).toMatchObject({ bytes: 3008 * MiB, source: "this function's memory, 3008 MB" });
    expect(b.shard).toMatchObject({ bytes: 512 * MiB, source: "the CountShard function's memory, 512 MB" });
    expect(b.shard.hint).toMatch(/ppdp:memoryMb=\{"CountShard":1024\}.*ppdp:rowsPerShard/);
    expect(b.Search.hint).toMatch(/ppdp:memoryMb=\{"Search":6016\}/);
    // On one machine every state has the machine's budget (or --max-memory).
    expect(
      stateBudgets({ limits: { maxMemoryMB: 700, maxLatticeNodes: undefined } }, {}).Search,
    ).toMatchObject({ bytes: 700 * MiB });
  });

  it('a release whose text column outgrows the budget is refused in the scan with nothing published', async () => {
    // 100,000 rows (Adult's, over and over) with a free-text note of about 40 bytes in each.
    const ws = adultWorkspace();
    const [header, ...rows] = ws.read('adult.csv').trimEnd().split(/\r?\n/);
    const random = new Random(3);
    const note = () => Array.from({ length: 6 }, () => random.below(2 ** 30).toString(36)).join(' ');
    const body = Array.from({ length: 100_000 }, (_, i) => `${rows[i % rows.length]};${note()}`);
    writeFileSync(join(ws.dir, 'adult.csv'), `${[`${header};note`, ...body].join('\n')}\n`);
    // The notes need about 4 MB more than the rest (160 MB of runtime and a few of codes, 162 MB
    // projected): the scan reads them as bytes, holds a shard's rows and the set of their distinct
    // values' hashes (166 MB projected, over nine tenths of 182 MB).
    ws.editSpec((s) => {
      (s.attributes as Record<string, unknown>).note = { type: 'insensitive' };
      s.limits = { maxMemoryMB: 182 };
    });
    const out = join(ws.dir, 'out');
    const run = executeRelease({ spec: ws.spec, out, shards: 4 });
    // Refused by the scan of the file (toMatchObject does not compare an error's message).
    const refusal = (await run.catch((e: unknown) => e)) as LimitError;
    expect(refusal.code).toBe('E_LIMIT_MEMORY');
    expect(refusal.message).toMatch(/: ScanPiece would need about \d+ MB/);
    expect(ws.list('out')).toBeNull();
    // Marked identifying, the column is never read in: the same budget admits the release.
    ws.editSpec((s) => {
      (s.attributes as Record<string, unknown>).note = { type: 'identifying' };
    });
    await expect(executeRelease({ spec: ws.spec, out, shards: 4 })).resolves.toBeDefined();
  }, 60_000);

  it('files that each fit alone but not together are refused by Combine, for the whole input', async () => {
    // Two files of Adult's values drawn at random: about 80,000 distinct quasi-identifier
    // tuples in each, none shared, so the search of both holds about twice the tuples of either.
    const ws = adultWorkspace();
    const [header, ...rows] = ws.read('adult.csv').trimEnd().split(/\r?\n/);
    const values = header!.split(';').map((_, c) => [...new Set(rows.map((r) => r.split(';')[c]!))]);
    const random = new Random(11);
    const file = () =>
      Array.from({ length: 80_000 }, () => values.map((v) => v[random.below(v.length)]).join(';'));
    mkdirSync(join(ws.dir, 'both'));
    for (const name of ['a.csv', 'b.csv'])
      writeFileSync(join(ws.dir, 'both', name), `${[header, ...file()].join('\n')}\n`);
    ws.editSpec((s) => (s.input = 'both'));
    const out = join(ws.dir, 'out');
    const refusal = async (searchMb: number) => {
      const before = process.env[STATE_MEMORY_ENV];
      process.env[STATE_MEMORY_ENV] = JSON.stringify({ Search: searchMb });
      try {
        // A whole file a shard: with fewer rows a shard Plan may cut a file into ranges (by an
        // estimate from its bytes), whose scans then race the other file's to refuse first.
        return (await executeRelease({ spec: ws.spec, out, rowsPerShard: 80_000 }).then(
          () => undefined,
          (e: LimitError) => e,
        )) as LimitError | undefined;
      } finally {
        if (before === undefined) delete process.env[STATE_MEMORY_ENV];
        else process.env[STATE_MEMORY_ENV] = before;
      }
    };
    // Too little for one file: its scan refuses, and says what one file's search needs.
    const tiny = await refusal(100);
    expect(tiny?.code).toBe('E_LIMIT_MEMORY');
    const perFile =
      /^the input's 80,000 rows \(projected from the first 80,000\) hold about [\d,]+ distinct quasi-identifier tuples: Search would need about (\d+) MB, over the 90 MB it may use \(nine tenths of 100 MB/.exec(
        tiny!.message,
      );
    expect(perFile, tiny!.message).not.toBeNull();
    // Enough for either file with 3 MB to spare (a budget is used to nine tenths): 80,000
    // more tuples at 90 bytes (about 7 MB) are too many for both.
    const searchMb = Math.ceil((Number(perFile![1]) + 3) / 0.9);
    const whole = await refusal(searchMb);
    expect(whole?.code).toBe('E_LIMIT_MEMORY');
    expect(whole!.message).toMatch(
      new RegExp(
        `^the input's 160,000 rows \\(projected from the first 160,000\\) hold about [\\d,]+ distinct quasi-identifier tuples: Search would need about \\d+ MB, over the ${Math.round(0.9 * searchMb)} MB it may use \\(nine tenths of ${searchMb} MB: the Search function's memory, ${searchMb} MB\\)$`,
      ),
    );
    expect(whole!.hint).toMatch(/ppdp:memoryMb=\{"Search":\d+\}/);
    expect(ws.list('out')).toBeNull();
  }, 120_000);
});
