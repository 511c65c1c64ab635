/**
 * Privacy hygiene, for every method with a bundled example (generalization, Mondrian, Anatomy,
 * Slicing), on Adult with planted values:
 * - an identifying column whose every value is SECRET-ID-<n> must never reach any output file;
 * - every sensitive value is prefixed SECRET-: progress lines (library and CLI) and reports must
 *   not name one;
 * - a canary person with unique CANARY-<column> values must not appear in report.json/html
 *   (the reports hold aggregates, never a record);
 * - the released row order is uncorrelated with the input order (an insensitive rowid column
 *   carries the input position through).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv } from '../../src/data/csv.ts';
import { Random } from '../../src/util/random.ts';
import { ADULT_DIR } from '../helpers/adult.ts';
import { releaseTo } from '../helpers/release.ts';
import { listFiles, runCli, writeResults } from './helpers.ts';

const EXAMPLES = join(ADULT_DIR, '..');
const METHODS = ['adult', 'adult-mondrian', 'adult-anatomy', 'adult-slicing'];
const ROWS = 2000;
const CATEGORICAL = [
  'sex',
  'race',
  'marital-status',
  'education',
  'native-country',
  'workclass',
  'salary-class',
];

let dir: string;
const results: Record<string, unknown> = {};
afterAll(() => {
  writeResults('hygiene', results);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Adult's first `rows` rows (all when undefined) with a `person` column (identifying,
 * SECRET-ID-<n>), a `rowid` column (insensitive: the input position), occupations prefixed
 * SECRET- and, unless `canary` is false, one canary person at the end.
 */
function plantedAdult(into: string, rows: number | undefined, canary = true): void {
  const lines = readFileSync(join(ADULT_DIR, 'adult.csv'), 'utf8').trimEnd().split(/\r?\n/);
  const header = lines[0]!.split(';');
  const occ = header.indexOf('occupation');
  const body = (rows === undefined ? lines.slice(1) : lines.slice(1, rows + 1)).map((l) => {
    const cells = l.split(';');
    cells[occ] = `SECRET-${cells[occ]}`;
    return cells;
  });
  if (canary) {
    body.push(header.map((c) => (c === 'age' ? '99' : c === 'occupation' ? 'SECRET-CANARY' : `CANARY-${c}`)));
  }
  const out = [
    [...header, 'person', 'rowid'].join(';'),
    ...body.map((cells, i) => [...cells, `SECRET-ID-${i + 1}`, String(i)].join(';')),
  ];
  writeFileSync(join(into, 'adult.csv'), `${out.join('\n')}\n`);
  for (const file of readdirSync(ADULT_DIR).filter((f) => f.startsWith('adult_hierarchy_'))) {
    const column = file.slice('adult_hierarchy_'.length, -'.csv'.length);
    let text = readFileSync(join(ADULT_DIR, file), 'utf8').replaceAll('\r\n', '\n');
    const width = text.split('\n')[0]!.split(';').length;
    if (column === 'occupation') {
      text = text
        .trimEnd()
        .split('\n')
        .map((l) =>
          l
            .split(';')
            .map((c) => (c === '*' ? c : `SECRET-${c}`))
            .join(';'),
        )
        .join('\n');
      text += `\nSECRET-CANARY;${Array.from({ length: width - 2 }, (_, l) => `SECRET-CANARY-L${l + 1};`).join('')}*\n`;
    } else if (CATEGORICAL.includes(column) && canary) {
      text = `${text.trimEnd()}\nCANARY-${column};${Array.from({ length: width - 2 }, (_, l) => `CANARY-${column}-L${l + 1};`).join('')}*\n`;
    }
    writeFileSync(join(into, file), text);
  }
}

/** The example spec of `method`, pointed at the planted copy. */
function specFor(into: string, method: string): string {
  const spec = JSON.parse(readFileSync(join(EXAMPLES, method, 'release.json'), 'utf8'));
  delete spec.root;
  spec.input = 'adult.csv';
  for (const a of Object.values(spec.attributes) as { hierarchy?: unknown }[]) {
    if (typeof a.hierarchy === 'string') a.hierarchy = a.hierarchy.split('/').pop();
  }
  spec.attributes.person = { type: 'identifying' };
  spec.attributes.rowid = { type: 'insensitive' };
  const path = join(into, `${method}.json`);
  writeFileSync(path, JSON.stringify(spec, null, 2));
  return path;
}

/** Spearman's rank correlation of two equally long lists of distinct numbers. */
function spearman(x: number[], y: number[]): number {
  const rank = (v: number[]) => {
    const order = v.map((_, i) => i).sort((a, b) => v[a]! - v[b]!);
    const r = new Array<number>(v.length);
    order.forEach((i, k) => {
      r[i] = k;
    });
    return r;
  };
  const rx = rank(x);
  const ry = rank(y);
  const n = x.length;
  const mean = (n - 1) / 2;
  let num = 0;
  let dx = 0;
  let dy = 0;
  for (let i = 0; i < n; i++) {
    num += (rx[i]! - mean) * (ry[i]! - mean);
    dx += (rx[i]! - mean) ** 2;
    dy += (ry[i]! - mean) ** 2;
  }
  return num / Math.sqrt(dx * dy);
}

/** The input positions of the rows of each released CSV that carries rowid (alone or in a slice). */
function rowOrders(out: string): Record<string, number[]> {
  const orders: Record<string, number[]> = {};
  for (const file of listFiles(out).filter((f) => f.endsWith('.csv'))) {
    const t = readCsv(join(out, file));
    for (const c of t.columns) {
      const parts = c.name.split('+');
      const at = parts.indexOf('rowid');
      if (at < 0) continue;
      const ids = Array.from(c.codes, (code) => Number(c.dictionary[code]!.split('|')[at]));
      if (ids.every((v) => Number.isInteger(v))) orders[file] = ids;
    }
  }
  return orders;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ppdp-hygiene-'));
  plantedAdult(dir, ROWS);
});

describe('privacy hygiene of every method', () => {
  it.each(METHODS)('%s', async (method) => {
    const spec = specFor(dir, method);
    const out = join(dir, `out-${method}`);
    const progress: string[] = [];
    const { report } = await releaseTo(spec, out, { progress: (line) => progress.push(line) });
    expect(report.verification.verified).toBe(true);

    // 1. Identifying values reach no output file (text or Arrow bytes).
    const files = listFiles(out);
    for (const f of files) {
      const bytes = readFileSync(join(out, f), 'latin1');
      expect(bytes, `${f} holds an identifying value`).not.toContain('SECRET-ID');
      if (!f.startsWith('report.') && f !== 'manifest.json') {
        expect(bytes, `${f} has the identifying column`).not.toMatch(/\bperson\b/);
      }
    }

    // 2. Progress lines name no sensitive or identifying value, nor the canary.
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) {
      expect(line).not.toContain('SECRET');
      expect(line).not.toContain('CANARY');
    }

    // 3. Reports hold aggregates: no sensitive value, no canary value, no identifying value.
    for (const f of ['report.json', 'report.html']) {
      const text = readFileSync(join(out, f), 'utf8');
      expect(text, `${f} names a sensitive value`).not.toContain('SECRET');
      expect(text, `${f} holds a record of the canary`).not.toContain('CANARY');
    }

    // 4. The released order says nothing about the input order.
    const orders = rowOrders(out);
    expect(Object.keys(orders).length, 'rowid travels through some released file').toBeGreaterThan(0);
    const correlations: Record<string, number> = {};
    for (const [file, ids] of Object.entries(orders)) {
      const rho = spearman(
        ids.map((_, i) => i),
        ids,
      );
      correlations[file] = Number(rho.toFixed(4));
      // sd ≈ 1/√n ≈ 0.022 for 2,000 rows: 0.1 is 4.5 sd.
      expect(Math.abs(rho), `${file}: rank correlation with the input order`).toBeLessThan(0.1);
    }
    results[method] = { files, progressLines: progress.length, rankCorrelation: correlations, leaks: 0 };
  });

  it('the CLI (its engine) prints no planted value either, and publishes no identifying value', async () => {
    const out = join(dir, 'out-cli');
    const r = await runCli(['release', specFor(dir, 'adult'), '--out', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.split('\n').length).toBeGreaterThan(2);
    expect(r.stderr + r.stdout).not.toContain('SECRET');
    expect(r.stderr + r.stdout).not.toContain('CANARY');
    for (const f of listFiles(out)) expect(readFileSync(join(out, f), 'latin1')).not.toContain('SECRET-ID');
  });

  it('an error deep in a method (no solution) names no planted value', async () => {
    const spec = JSON.parse(readFileSync(specFor(dir, 'adult'), 'utf8'));
    spec.privacy.push({ model: 'distinct-l-diversity', attribute: 'occupation', l: 40 });
    const path = join(dir, 'nosolution.json');
    writeFileSync(path, JSON.stringify(spec));
    const r = await runCli(['release', path, '--out', join(dir, 'out-nosolution')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no generalization satisfies distinct-l-diversity l = 40/);
    expect(r.stderr).not.toContain('SECRET');
    expect(r.stderr).not.toContain('CANARY');
  });
});

describe('the shuffle is not public', () => {
  // report.json publishes the seed and the row count; the shuffle must not be recomputable
  // from them. It is keyed by the seed and a digest of the input (src/util/keys.ts).
  it('the input position of released rows cannot be recomputed from the published seed and row count', async () => {
    const out = join(dir, 'out-order');
    const { report } = await releaseTo(specFor(dir, 'adult'), out);
    const ids = rowOrders(out)['data.csv']!;
    const perm = new Random(report.spec.seed).permutation(report.rows.input);
    const recovered = ids.filter((id, j) => perm[j] === id).length / ids.length;
    results.publicShuffle = { rows: ids.length, recoveredFromSeed: recovered };
    expect(recovered).toBeLessThan(0.01);
  });
});

describe('row order on the whole of Adult', () => {
  it('the generalization release of 30,162 rows has rank correlation ≈ 0 with the input order', async () => {
    const full = join(dir, 'full');
    mkdirSync(full);
    plantedAdult(full, undefined, false);
    const out = join(full, '..', 'out-full');
    await releaseTo(specFor(full, 'adult'), out);
    const ids = rowOrders(out)['data.csv']!;
    expect(ids.length).toBe(30162);
    const rho = spearman(
      ids.map((_, i) => i),
      ids,
    );
    // sd ≈ 1/√n ≈ 0.0058: 0.03 is 5 sd.
    expect(Math.abs(rho)).toBeLessThan(0.03);
    results.fullAdult = { rows: ids.length, rankCorrelation: Number(rho.toFixed(5)) };
  });
});
