/**
 * Insensitive columns pass through a sharded release as their rows' bytes (src/data/raw.ts):
 * the shards hold them as plain Utf8, they are split by output part beside the search, Assemble
 * gathers the released rows' bytes in the order of its shuffle, and the released files hold
 * them as they are (plain Utf8, PLAIN Parquet). The release is the one a single task makes of
 * the same spec, byte for byte, whatever the shards, parts, files and threads, with values a CSV
 * must quote or escape, values repeated and unique, and rows removed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DataType, tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import { methodFor } from '../../src/methods/registry.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { forgetAll } from '../../src/pipeline/memo.ts';
import { sealWork, storeResolver } from '../../src/pipeline/storage/index.ts';
import { unsealTrailer } from '../../src/pipeline/storage/sealed.ts';
import { Random } from '../../src/util/random.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const ROWS = 3000;

/** Cells of the note column: unique text, beside values a CSV must quote or escape. */
const SPECIAL = ['', 'a;b', 'say "hi"', 'two\nlines', '=SUM(A1)', '-3', "'x", 'café', '日本 😀', 'plain'];

const quoted = (cell: string) => (/[;"\n\r]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

/** The Adult workspace of ROWS rows with a note and an amount, both insensitive. */
function workspace() {
  const ws = adultWorkspace(ROWS);
  const random = new Random(11);
  const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\n');
  const rows = lines.map((line, i) => {
    const note =
      random.below(4) === 0 ? SPECIAL[random.below(SPECIAL.length)]! : `seen #${i} ${random.below(1e6)}`;
    const amount = String(random.below(50) * 10);
    return `${line};${quoted(note)};${amount}`;
  });
  ws.write('adult.csv', `${[`${header};note;amount`, ...rows].join('\n')}\n`);
  ws.editSpec((s) => {
    const attributes = s.attributes as Record<string, unknown>;
    attributes.note = { type: 'insensitive' };
    attributes.amount = { type: 'insensitive' };
  });
  return ws;
}

/** A CSV's records (a quoted cell may hold a line break). */
function records(text: string): string[] {
  const out: string[] = [];
  let inQuotes = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') inQuotes = !inQuotes;
    else if (text[i] === '\n' && !inQuotes) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

const withoutTimings = (path: string, without: string[] = []) => {
  const report = JSON.parse(readFileSync(path, 'utf8'));
  for (const key of ['timings', ...without]) delete report[key];
  return JSON.stringify(report);
};

/**
 * Every data file of `b` as in `a`, and report.json but for its timings and what `without`
 * names (a single task's verification checks are the whole-table verifier's).
 */
function expectSameRelease(a: string, b: string, without: string[] = []): void {
  const files = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((n) => /\.(csv|arrow|parquet)$/.test(n))
      .sort();
  expect(files(b)).toEqual(files(a));
  expect(files(a).length).toBeGreaterThan(1);
  for (const name of files(a))
    expect(readFileSync(join(b, name)).equals(readFileSync(join(a, name))), name).toBe(true);
  expect(withoutTimings(join(b, 'report.json'), without)).toBe(
    withoutTimings(join(a, 'report.json'), without),
  );
}

describe('columns that pass through a sharded release', () => {
  it('release the bytes of a single task, masked or removed, with formula escaping and Parquet', async () => {
    const ws = workspace();
    for (const [name, edit] of [
      ['masked', () => {}],
      [
        'removed',
        (s: Record<string, unknown>) => {
          s.method = { name: 'generalization', maxSuppression: 0.05, metric: 'ncp', suppressed: 'remove' };
          s.format = { delimiter: ';', escapeFormulas: true };
          s.output = { formats: ['arrow', 'csv', 'parquet'] };
          s.seed = 5;
        },
      ],
    ] as const) {
      ws.editSpec(edit);
      const single = join(ws.dir, 'out', `${name}-single`);
      // The method built as one task over the whole table: no column passes through as bytes.
      const one = await executeRelease(
        { spec: ws.spec, out: single },
        { method: methodFor('generalization') },
      );
      expect(one.plan.mode).toBe('single');
      const columns = one.report.input.columns;
      expect(columns.find((c) => c.name === 'note')!.distinct).toBeGreaterThan(ROWS / 2);
      // Released as the rows' values, not a dictionary: a plain Utf8 column.
      const released = tableFromIPC(readFileSync(join(single, 'data.arrow'))).schema.fields;
      expect(DataType.isUtf8(released.find((f) => f.name === 'note')!.type)).toBe(true);
      expect(DataType.isDictionary(released.find((f) => f.name === 'age')!.type)).toBe(true);
      for (const shards of [1, 4]) {
        const out = join(ws.dir, 'out', `${name}-${shards}`);
        const result = await executeRelease({ spec: ws.spec, out, shards });
        expect(result.plan.mode).toBe('sharded');
        expect(result.report.verification.verified).toBe(true);
        expectSameRelease(single, out, ['verification']);
        if (shards > 1) expectSameRelease(join(ws.dir, 'out', `${name}-1`), out);
      }
      // Every state reading only the work area, as each would in a Lambda of its own.
      const apart = join(ws.dir, 'out', `${name}-apart`);
      await executeRelease(
        { spec: ws.spec, out: apart, shards: 3 },
        {
          wrap: (_, handler) => async (input) => {
            forgetAll();
            return handler(input);
          },
        },
      );
      expectSameRelease(join(ws.dir, 'out', `${name}-1`), apart);
    }
  });

  it('travel the work area as plain Utf8, never coded, in shards and pieces', async () => {
    const ws = workspace();
    const out = join(ws.dir, 'out', 'kept');
    const work = join(ws.dir, 'work');
    const seen: string[] = [];
    // Read before each Assemble: the scan's shards, the bytes routed beside the search and
    // Apply's pieces are in the work area then.
    const check = () => {
      const arrows = readdirSync(work, { recursive: true, encoding: 'utf8' }).filter((n) =>
        /(rows|route|scatter)\/\d+\/\d+(\.bytes)?\.arrow$/.test(n),
      );
      for (const name of arrows) {
        // The work file's seal checked and left out.
        const fields = tableFromIPC(unsealTrailer(readFileSync(join(work, name)), name)).schema.fields;
        const note = fields.find((f) => f.name === 'note');
        const age = fields.find((f) => f.name === 'age');
        // A shard's codes and its bytes are stored apart (rows/P/J.arrow, rows/P/J.bytes.arrow),
        // and go apart again after the search (scatter/, route/).
        const bytes = name.endsWith('.bytes.arrow') || name.startsWith('route/');
        if (bytes) expect(DataType.isUtf8(note!.type), name).toBe(true);
        else expect(note, name).toBeUndefined();
        if (!bytes) expect(DataType.isDictionary(age!.type), name).toBe(true);
        else expect(age, name).toBeUndefined();
        seen.push(name);
      }
    };
    await executeRelease(
      { spec: ws.spec, out, shards: 2, work: pathToFileURL(`${work}/`).href },
      {
        wrap: (state, handler) => async (input) => {
          if (state === 'Assemble') check();
          return handler(input);
        },
      },
    );
    for (const folder of ['rows/', 'route/', 'scatter/'])
      expect(seen.some((n) => n.startsWith(folder))).toBe(true);
    expect(seen.some((n) => n.endsWith('.bytes.arrow'))).toBe(true);
  });

  it('are read by the states that need them alone: CountShard and ApplyShard read the codes only', async () => {
    const ws = workspace();
    const work = join(ws.dir, 'work');
    const bytesFiles = () =>
      readdirSync(work, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.bytes.arrow'));
    const hidden: string[] = [];
    // One state at a time (the search's and Release's branches run side by side otherwise).
    let turn = Promise.resolve();
    const alone = <T>(run: () => Promise<T>): Promise<T> => {
      const done = turn.then(run);
      turn = done.then(
        () => {},
        () => {},
      );
      return done;
    };
    const result = await executeRelease(
      {
        spec: ws.spec,
        out: join(ws.dir, 'out', 'codes-only'),
        shards: 3,
        work: pathToFileURL(`${work}/`).href,
      },
      {
        // Every state reading only the work area, as in a Lambda of its own; the shards' bytes
        // moved away while a state that needs none runs (a read of them would fail it).
        wrap: (state, handler) => (input) =>
          alone(async () => {
            forgetAll();
            const codesOnly =
              state === 'CountShard' ||
              (state === 'ApplyShard' && (input as { phase?: string }).phase !== 'route');
            if (!codesOnly) return handler(input);
            const names = bytesFiles();
            expect(names.length).toBe(3);
            for (const name of names) renameSync(join(work, name), join(work, `${name}.away`));
            hidden.push(state);
            try {
              return await handler(input);
            } finally {
              for (const name of names) renameSync(join(work, `${name}.away`), join(work, name));
            }
          }),
      },
    );
    expect(result.report.verification.verified).toBe(true);
    expect(hidden.filter((s) => s === 'CountShard')).toHaveLength(3);
    expect(hidden.filter((s) => s === 'ApplyShard')).toHaveLength(3);
  });

  it('release the same bytes from a folder of files, in output parts and in worker threads', async () => {
    const ws = workspace();
    const whole = join(ws.dir, 'out', 'whole');
    await executeRelease({ spec: ws.spec, out: whole, shards: 2, rowsPerPart: 1000 });
    const [header, ...lines] = records(ws.read('adult.csv').trimEnd());
    mkdirSync(join(ws.dir, 'cut'));
    const cuts = [0, 1000, 1001, 2600, ROWS];
    for (let f = 0; f + 1 < cuts.length; f++)
      writeFileSync(
        join(ws.dir, 'cut', `part-${f}.csv`),
        `${[header, ...lines.slice(cuts[f], cuts[f + 1])].join('\n')}\n`,
      );
    ws.editSpec((s) => (s.input = 'cut'));
    const out = join(ws.dir, 'out', 'files');
    const result = await executeRelease(
      { spec: ws.spec, out, rowsPerShard: 400, rowsPerPart: 1000 },
      { workerMinRows: 0 },
    );
    expect(result.plan.pieces).toBe(4);
    expect(result.plan.parts).toBe(3);
    expect(result.report.verification.verified).toBe(true);
    // The report names the input (a file, a folder) and its run.
    expectSameRelease(whole, out, ['input', 'ppdp']);
    // Rows removed: each part's shuffle is of all its routed rows, the removed ones dropped.
    ws.editSpec((s) => {
      s.method = { name: 'generalization', maxSuppression: 0.05, metric: 'ncp', suppressed: 'remove' };
    });
    const said: string[] = [];
    const events: Record<string, unknown>[] = [];
    const removed = await executeRelease(
      { spec: ws.spec, out: join(ws.dir, 'out', 'files-removed'), rowsPerShard: 400, rowsPerPart: 1000 },
      { workerMinRows: 0, progress: (line) => said.push(line), log: (event) => events.push(event) },
    );
    // The search and the map items run in worker threads: what they say reaches the run's
    // progress and log all the same.
    expect(said.some((line) => /chosen node .* after checking/.test(line))).toBe(true);
    const states = (state: string) => events.filter((e) => e.state === state).length;
    expect(states('Search')).toBe(1);
    expect(states('RouteShard')).toBe(removed.plan.shards);
    // The bytes' hashes beside the search too, a shard each, as the shards' slices read them.
    expect(events.filter((e) => e.state === 'VerifySlice' && e.kind === 'bytes').length).toBe(
      removed.plan.shards,
    );
    expect(states('Assemble')).toBe(3);
    expect(removed.plan.parts).toBe(3);
    expect(removed.report.verification.verified).toBe(true);
    expect(removed.report.rows.suppressed).toBeGreaterThan(0);
    expect(removed.report.rows.released).toBe(ROWS - removed.report.rows.suppressed);
    const inProcess = join(ws.dir, 'out', 'files-removed-1');
    await executeRelease({ spec: ws.spec, out: inProcess, rowsPerShard: 700, rowsPerPart: 1000 });
    expectSameRelease(join(ws.dir, 'out', 'files-removed'), inProcess);
  });

  it('are checked row by row: two rows whose notes are swapped in a staged part stop the release', async () => {
    const ws = workspace();
    const out = join(ws.dir, 'out', 'tampered');
    let tampered = false;
    const run = executeRelease(
      { spec: ws.spec, out, shards: 2 },
      {
        wrap: (state, handler) => async (input) => {
          const done = await handler(input);
          if (state === 'Assemble') {
            tampered = true;
            // Written wrong through the work area's sealed store: the seals match, so only the
            // verifier can tell. Every note is still released, each with another row.
            const work = sealWork(await storeResolver().open((input as { work: string }).work));
            const staged = `${work.key}staging/data`;
            const table = readArrow(`/${staged}.arrow`);
            const note = table.columns.find((c) => c.name === 'note')!;
            const other = note.codes.findIndex((code) => code !== note.codes[0]);
            [note.codes[0], note.codes[other]] = [note.codes[other]!, note.codes[0]!];
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
