/**
 * The state machine releases what the direct pipeline releases: for generalization with 1
 * and several row shards (rows are shuffled once, at the merge, so the shard count cannot
 * change the release), and for every other registered method as a single-shard task.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import { HierarchyError, PpdpError } from '../../src/errors.ts';
import { methodFor } from '../../src/methods/registry.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { forgetAll } from '../../src/pipeline/memo.ts';
import { MAX_SHARDS } from '../../src/pipeline/states/types.ts';
import { sealWork, storeResolver } from '../../src/pipeline/storage/index.ts';
import type { MethodName } from '../../src/release-spec/spec.ts';
import { ADULT_DIR } from '../helpers/adult.ts';
import { arrowInBatches } from '../helpers/arrow.ts';
import { adultParquetFolder } from '../helpers/parquet.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

const withoutTimings = (path: string) => {
  const report = JSON.parse(readFileSync(path, 'utf8'));
  return JSON.stringify({ ...report, timings: undefined });
};

function expectSameRelease(a: string, b: string): void {
  for (const name of ['data.arrow', 'data.csv']) {
    expect(readFileSync(join(b, name)).equals(readFileSync(join(a, name))), name).toBe(true);
  }
  expect(withoutTimings(join(b, 'report.json'))).toBe(withoutTimings(join(a, 'report.json')));
  const names = (dir: string) => readdirSync(dir).sort();
  expect(names(b)).toEqual(names(a));
}

const CASES: {
  name: string;
  rows?: number;
  /** Files to add to the workspace before the spec is edited. */
  prepare?: (ws: Workspace) => void;
  edit?: (spec: Record<string, unknown>) => void;
  shards: number[];
  /** Shards the plan makes of `shards` asked for (a folder: each file split apart). */
  shardsOf?: (shards: number) => number;
}[] = [
  { name: 'the Adult example (k-anonymity, masked suppression)', shards: [1, 3, 8] },
  {
    name: 'k-anonymity and l-diversity, suppressed rows removed',
    rows: 4000,
    edit: (s) => {
      s.privacy = [
        { model: 'k-anonymity', k: 3 },
        { model: 'distinct-l-diversity', attribute: 'occupation', l: 2 },
      ];
      s.method = {
        name: 'generalization',
        maxSuppression: 0.05,
        metric: 'discernibility',
        suppressed: 'remove',
      };
      s.seed = 7;
    },
    shards: [1, 5],
  },
  {
    name: 'a folder of Parquet files (shards spanning files and row groups)',
    rows: 3000,
    prepare: (ws) => adultParquetFolder(ws.dir, 'lake', ws.read('adult.csv'), [1100, 1101, 2500], 300),
    edit: (s) => {
      s.input = 'lake';
      delete s.format;
    },
    shards: [1, 4, 7],
    // Each file is scanned apart and split into its own shards: 1,100, 1, 1,399 and 500 rows.
    shardsOf: (asked) => [1100, 1, 1399, 500].reduce((n, f) => n + Math.ceil(f / Math.ceil(3000 / asked)), 0),
  },
];

describe('generalization over row shards', () => {
  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: 1 and several shards release the same bytes',
    async (_, c) => {
      const ws = adultWorkspace(c.rows);
      c.prepare?.(ws);
      if (c.edit) ws.editSpec(c.edit);
      const direct = join(ws.dir, 'out', 'direct');
      await releaseTo(ws.spec, direct);
      for (const shards of c.shards) {
        const out = join(ws.dir, 'out', `shards-${shards}`);
        const result = await executeRelease({ spec: ws.spec, out, shards });
        expect(result.plan.mode).toBe('sharded');
        expect(result.plan.shards).toBe(c.shardsOf?.(shards) ?? shards);
        expectSameRelease(direct, out);
      }
      // The same states called in order, without the state machine.
      const plain = join(ws.dir, 'out', 'direct-engine');
      await executeRelease({ spec: ws.spec, out: plain, shards: 2 }, { engine: 'direct' });
      expectSameRelease(direct, plain);
      // Every state reading only the work area, as each would in its own Lambda: nothing kept
      // in this process between states (src/pipeline/memo.ts).
      const apart = join(ws.dir, 'out', 'states-apart');
      await executeRelease(
        { spec: ws.spec, out: apart, shards: 2 },
        {
          wrap: (_, handler) => async (input) => {
            forgetAll();
            return handler(input);
          },
        },
      );
      expectSameRelease(direct, apart);
    },
  );
});

describe('an input of many files, each scanned apart', () => {
  it('releases the bytes of the one file holding their rows, whatever the files, shards and threads', async () => {
    const ws = adultWorkspace(3000);
    const whole = join(ws.dir, 'out', 'whole');
    await executeRelease({ spec: ws.spec, out: whole, rowsPerShard: 700 });
    // The same rows cut into files of unequal length, each with its own header.
    const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\n');
    mkdirSync(join(ws.dir, 'cut'));
    const cuts = [0, 1000, 1001, 2600, 3000];
    for (let f = 0; f + 1 < cuts.length; f++) {
      const rows = lines.slice(cuts[f], cuts[f + 1]);
      writeFileSync(join(ws.dir, 'cut', `part-${f}.csv`), `${[header, ...rows].join('\n')}\n`);
    }
    // An empty part, as a table written in parts may leave: it adds no rows.
    writeFileSync(join(ws.dir, 'cut', 'part-9.csv'), `${header}\n`);
    ws.editSpec((s) => (s.input = 'cut'));
    for (const [name, rowsPerShard, workerMinRows] of [
      ['files', 700, undefined],
      ['files-in-workers', 400, 0],
    ] as const) {
      const out = join(ws.dir, 'out', name);
      const result = await executeRelease({ spec: ws.spec, out, rowsPerShard }, { workerMinRows });
      expect(result.plan.pieces).toBe(5);
      // Each file is split into its own shards: a shard never spans two files.
      expect(result.plan.shards).toBe(
        [1000, 1, 1599, 400].reduce((n, r) => n + Math.ceil(r / rowsPerShard), 0),
      );
      for (const file of ['data.arrow', 'data.csv'])
        expect(readFileSync(join(out, file)).equals(readFileSync(join(whole, file))), file).toBe(true);
    }
  });

  it('refuses a file whose columns differ from the first file’s, naming both', async () => {
    const ws = adultWorkspace(300);
    const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\n');
    const names = header!.split(',');
    // The second file lists the same columns in another order.
    const swapped = [names[1], names[0], ...names.slice(2)].join(',');
    const reorder = (l: string) => {
      const c = l.split(',');
      return [c[1], c[0], ...c.slice(2)].join(',');
    };
    mkdirSync(join(ws.dir, 'cut'));
    writeFileSync(join(ws.dir, 'cut', 'a.csv'), `${[header, ...lines.slice(0, 150)].join('\n')}\n`);
    writeFileSync(
      join(ws.dir, 'cut', 'b.csv'),
      `${[swapped, ...lines.slice(150).map(reorder)].join('\n')}\n`,
    );
    ws.editSpec((s) => (s.input = 'cut'));
    const out = join(ws.dir, 'out', 'refused');
    const e = await executeRelease({ spec: ws.spec, out }).then(
      () => undefined,
      (err: PpdpError) => err,
    );
    expect(e?.code).toBe('E_INPUT_FILES_DIFFER');
    expect(e?.message).toMatch(
      /^cut\/b\.csv: the columns differ from the folder's first file: its column 1 is named otherwise than a\.csv's$/,
    );
    expect(existsSync(join(out, 'manifest.json'))).toBe(false);
  });
});

describe('one Arrow file of many record batches, read as ranges side by side', () => {
  it('releases the bytes of the same rows in one batch, whatever the ranges, shards and threads', async () => {
    const ws = adultWorkspace(3000);
    ws.editSpec((s) => delete s.format);
    arrowInBatches(join(ws.dir, 'adult.csv'), join(ws.dir, 'one.arrow'));
    // Batches of 700, 700, 1, 1,199 and 400 rows.
    arrowInBatches(join(ws.dir, 'adult.csv'), join(ws.dir, 'many.arrow'), [700, 1400, 1401, 2600]);
    ws.editSpec((s) => (s.input = 'one.arrow'));
    const whole = join(ws.dir, 'out', 'whole');
    const one = await executeRelease({ spec: ws.spec, out: whole, rowsPerShard: 700 });
    expect(one.plan.pieces).toBe(1);
    ws.editSpec((s) => (s.input = 'many.arrow'));
    for (const [name, rowsPerShard, workerMinRows] of [
      ['ranges', 700, undefined],
      ['ranges-in-workers', 1400, 0],
    ] as const) {
      const out = join(ws.dir, 'out', name);
      const result = await executeRelease({ spec: ws.spec, out, rowsPerShard }, { workerMinRows });
      // Whole batches of at most a shard's rows (a longer batch alone): 700 | 700 | 1 | 1,199 |
      // 400 (the 1,199 rows in two shards), or 700+700 | 1+1,199 | 400.
      expect(result.plan.pieces).toBe(rowsPerShard === 700 ? 5 : 3);
      expect(result.plan.shards).toBe(rowsPerShard === 700 ? 6 : 3);
      for (const file of ['data.arrow', 'data.csv'])
        expect(readFileSync(join(out, file)).equals(readFileSync(join(whole, file))), file).toBe(true);
    }
    // Every state reading only the work area, as each would in its own Lambda.
    const apart = join(ws.dir, 'out', 'states-apart');
    await executeRelease(
      { spec: ws.spec, out: apart, rowsPerShard: 700 },
      {
        wrap: (_, handler) => async (input) => {
          forgetAll();
          return handler(input);
        },
      },
    );
    expectSameRelease(join(ws.dir, 'out', 'ranges'), apart);
  });
});

describe('an input of more files than shards may be', () => {
  it(`refuses a folder of more than ${MAX_SHARDS} files in Plan, publishing nothing`, async () => {
    const ws = adultWorkspace(2);
    const [header, row] = ws.read('adult.csv').trimEnd().split('\n');
    mkdirSync(join(ws.dir, 'many'));
    for (let f = 0; f <= MAX_SHARDS; f++)
      writeFileSync(join(ws.dir, 'many', `part-${String(f).padStart(5, '0')}.csv`), `${header}\n${row}\n`);
    ws.editSpec((s) => (s.input = 'many'));
    const out = join(ws.dir, 'out', 'refused');
    const e = await executeRelease({ spec: ws.spec, out }).then(
      () => undefined,
      (err: PpdpError) => err,
    );
    expect(e?.code).toBe('E_REQUEST');
    expect(e?.message).toBe(`many holds ${MAX_SHARDS + 1} files, more than ${MAX_SHARDS}`);
    expect(e?.hint).toBe('merge the input into fewer, larger files');
    expect(existsSync(join(out, 'manifest.json'))).toBe(false);
  }, 120_000);
});

/** The other examples over Adult (other methods), pointed at a cut of Adult in a workspace. */
function otherMethodExamples(): { dir: string; method: MethodName }[] {
  const root = join(ADULT_DIR, '..');
  return readdirSync(root)
    .filter((d) => d !== 'adult')
    .flatMap((d) => {
      try {
        const spec = JSON.parse(readFileSync(join(root, d, 'release.json'), 'utf8'));
        if (!String(spec.input).endsWith('adult/adult.csv')) return [];
        return [{ dir: d, method: spec.method.name as MethodName }];
      } catch {
        return [];
      }
    })
    .filter(({ method }) => {
      try {
        return methodFor(method) !== undefined;
      } catch (e) {
        if (e instanceof PpdpError) return false;
        throw e;
      }
    });
}

describe('every other registered method runs through the state machine as one task', () => {
  const examples = otherMethodExamples();
  it.runIf(examples.length > 0).each(examples.map((e) => [e.method, e] as const))('%s', async (_, e) => {
    const ws = adultWorkspace(3000);
    const spec = JSON.parse(readFileSync(join(ADULT_DIR, '..', e.dir, 'release.json'), 'utf8'));
    spec.input = 'adult.csv';
    for (const a of Object.values(spec.attributes) as { hierarchy?: unknown }[]) {
      if (typeof a.hierarchy === 'string') a.hierarchy = a.hierarchy.split('/').pop();
    }
    writeFileSync(ws.spec, JSON.stringify(spec, null, 2));
    const direct = join(ws.dir, 'out', 'direct');
    await releaseTo(ws.spec, direct);
    const out = join(ws.dir, 'out', 'local');
    const result = await executeRelease({ spec: ws.spec, out, shards: 4 });
    expect(result.plan.mode).toBe('single');
    expectSameRelease(direct, out);
  });
});

describe('a release in output parts', () => {
  /** Each released row as one string, sorted: the release's multiset of rows. */
  const rowsOf = (dir: string, names: string[]): string[] =>
    names
      .flatMap((n) => readFileSync(join(dir, n), 'utf8').split(/\r?\n/).slice(1))
      .filter((line) => line !== '')
      .sort();

  it('scatters the rows of one part release over parts the shard count does not change, each verified and listed with its SHA-256', async () => {
    const ws = adultWorkspace();
    const whole = join(ws.dir, 'out', 'whole');
    await executeRelease({ spec: ws.spec, out: whole });
    const outs = [1, 3].map((shards) => join(ws.dir, 'out', `parts-${shards}`));
    for (const [i, shards] of [1, 3].entries()) {
      const result = await executeRelease({ spec: ws.spec, out: outs[i]!, shards, rowsPerPart: 8000 });
      expect(result.plan.parts).toBe(4);
      expect(result.report.verification.verified).toBe(true);
      expect(result.report.verification.checks.find((c) => c.name === 'csv-equals-arrow')!.detail).toMatch(
        /4 parts/,
      );
      const listed = result.manifest.files.map((f) => f.name);
      expect(listed.filter((n) => n.startsWith('data/part-'))).toHaveLength(8);
      expect(listed).not.toContain('data.csv');
    }
    const parts = readdirSync(join(outs[0]!, 'data')).sort();
    expect(parts).toEqual(readdirSync(join(outs[1]!, 'data')).sort());
    for (const name of parts)
      expect(
        readFileSync(join(outs[1]!, 'data', name)).equals(readFileSync(join(outs[0]!, 'data', name))),
        name,
      ).toBe(true);
    const csvs = parts.filter((n) => n.endsWith('.csv')).map((n) => `data/${n}`);
    // The same rows as the one-part release, in other files and another order.
    expect(rowsOf(outs[0]!, csvs)).toEqual(rowsOf(whole, ['data.csv']));
    const sizes = csvs.map((n) => rowsOf(outs[0]!, [n]).length);
    for (const size of sizes) expect(size).toBeGreaterThan(6000);
    // Verified in slices: each input shard and each part apart, then compared.
    expect(readdirSync(outs[1]!).sort()).toEqual(['data', 'manifest.json', 'report.html', 'report.json']);
    // Released again as one part into the same folder: the parts and their folder go.
    await executeRelease({ spec: ws.spec, out: outs[1]!, shards: 3 });
    expect(readdirSync(outs[1]!).sort()).toEqual([
      'data.arrow',
      'data.csv',
      'manifest.json',
      'report.html',
      'report.json',
    ]);
    expect(
      withoutTimings(join(outs[0]!, 'report.json')).replace(/"csv-equals-arrow".*?"detail":"[^"]*"/, ''),
    ).toBe(withoutTimings(join(whole, 'report.json')).replace(/"csv-equals-arrow".*?"detail":"[^"]*"/, ''));
  });
});

describe('verification in slices', () => {
  it('stops a release whose staged part was written wrong (two QI cells swapped, sealed as written)', async () => {
    const ws = adultWorkspace();
    const out = join(ws.dir, 'out', 'tampered');
    let tampered = false;
    const run = executeRelease(
      { spec: ws.spec, out, shards: 2, rowsPerPart: 10000 },
      {
        wrap: (state, handler) => async (input) => {
          const done = await handler(input);
          if (state === 'Assemble' && (input as { index: number }).index === 1) {
            tampered = true;
            // Written wrong by its writer, through the work area's sealed store: the seals
            // match, so only the verifier can tell. (Every Assemble ends before the parts' slices.)
            const work = sealWork(await storeResolver().open((input as { work: string }).work));
            const staged = `${work.key}staging/data/part-00001`;
            const table = readArrow(`/${staged}.arrow`);
            const age = table.columns.find((c) => c.name === 'age')!;
            const other = age.codes.findIndex((code) => code !== age.codes[0]);
            [age.codes[0], age.codes[other]] = [age.codes[other]!, age.codes[0]!];
            const columns = table.columns.map((c) => ({ kind: 'dictionary' as const, ...c }));
            await work.store.put(`${staged}.arrow`, encodeArrow(columns));
            await work.store.put(`${staged}.csv`, encodeCsv(columns, ';'));
          }
          return done;
        },
      },
    );
    await expect(run).rejects.toThrow(/rows-generalize-input/);
    expect(tampered).toBe(true);
    expect(existsSync(join(out, 'manifest.json'))).toBe(false);
  });
});

describe('a shard that holds a value its hierarchy lacks', () => {
  it('is refused naming the row in the input file, not in the shard', async () => {
    const ws = adultWorkspace();
    const lines = ws.read('adult.csv').trimEnd().split('\n');
    lines[lines.length - 1] = lines.at(-1)!.replace(/^Female;52;/, 'Female;123;');
    ws.write('adult.csv', `${lines.join('\n')}\n`);
    const run = executeRelease({ spec: ws.spec, out: join(ws.dir, 'out', 'refused'), shards: 3 });
    await expect(run).rejects.toThrow(new RegExp(`row ${lines.length}\\b`));
  });
});

describe('map states in worker threads', () => {
  it('release the same bytes as in one thread, and a refusal in a worker keeps its class and code', async () => {
    const ws = adultWorkspace();
    const outs = [0, 2].map((workers) => join(ws.dir, 'out', `workers-${workers}`));
    for (const [i, workers] of [0, 2].entries())
      await executeRelease(
        { spec: ws.spec, out: outs[i]!, shards: 3, rowsPerPart: 10000 },
        { workers, workerMinRows: 0 },
      );
    const names = (dir: string) => readdirSync(join(dir, 'data')).sort();
    expect(names(outs[1]!)).toEqual(names(outs[0]!));
    for (const name of names(outs[0]!))
      expect(
        readFileSync(join(outs[1]!, 'data', name)).equals(readFileSync(join(outs[0]!, 'data', name))),
        name,
      ).toBe(true);
    expect(withoutTimings(join(outs[1]!, 'report.json'))).toBe(withoutTimings(join(outs[0]!, 'report.json')));

    const lines = ws.read('adult.csv').trimEnd().split('\n');
    lines[lines.length - 1] = lines.at(-1)!.replace(/^Female;52;/, 'Female;123;');
    ws.write('adult.csv', `${lines.join('\n')}\n`);
    const refused = await executeRelease(
      { spec: ws.spec, out: join(ws.dir, 'out', 'refused'), shards: 3 },
      { workers: 2, workerMinRows: 0 },
    ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HierarchyError);
    expect((refused as HierarchyError).code).toMatch(/^E_HIERARCHY/);
    expect((refused as Error).message).toMatch(new RegExp(`row ${lines.length}\\b`));
  });
});

describe('a release request with a bad shard or part size', () => {
  it.each(['shards', 'rowsPerShard', 'rowsPerPart'])(
    '%s = 0 is refused before any work, naming the field',
    async (field) => {
      const ws = adultWorkspace(100);
      const out = join(ws.dir, 'out', field);
      const refused = await executeRelease({ spec: ws.spec, out, [field]: 0 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PpdpError);
      expect((refused as PpdpError).code).toBe('E_REQUEST');
      expect((refused as Error).message).toBe(
        `the release request's ${field} must be a whole number ${field === 'shards' ? `from 1 to ${MAX_SHARDS}` : '≥ 1'}`,
      );
      expect((refused as PpdpError).hint).toMatch(new RegExp(`^e\\.g\\. "${field}": \\d+$`));
      expect(existsSync(join(out, 'manifest.json'))).toBe(false);
    },
  );

  it('shards past the limit are refused before a row is counted', async () => {
    const ws = adultWorkspace(100);
    const refused = await executeRelease({
      spec: ws.spec,
      out: join(ws.dir, 'out', 'many'),
      shards: 1e9,
    }).catch((e: unknown) => e);
    expect((refused as PpdpError).code).toBe('E_REQUEST');
    expect((refused as Error).message).toBe(
      `the release request's shards must be a whole number from 1 to ${MAX_SHARDS}`,
    );
  });
});
