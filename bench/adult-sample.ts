/**
 * Adult-shaped inputs of any size for the benchmarks: a copy of the Adult example whose
 * adult.csv holds rows drawn from Adult with a fixed seed.
 */
import { cpSync, createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Random } from '../src/util/random.ts';

export const ADULT = new URL('../examples/adult', import.meta.url).pathname;

/** A data-independent node of Adult's lattice: the level per quasi-identifier the DP benches and tests fix. */
export const ADULT_DP_LEVELS: Readonly<Record<string, number>> = {
  sex: 0,
  age: 2,
  race: 1,
  'marital-status': 1,
  education: 2,
  'native-country': 2,
  workclass: 1,
  'salary-class': 0,
};

export /** A copy of the Adult example whose adult.csv holds `rows` rows drawn from Adult. */
async function sampled(rows: number): Promise<{ dir: string; spec: string; bytes: number }> {
  const dir = mkdtempSync(join(os.tmpdir(), `ppdp-bench-${rows}-`));
  cpSync(ADULT, dir, { recursive: true });
  const lines = readFileSync(join(ADULT, 'adult.csv'), 'utf8')
    .split(/\r?\n/)
    .filter((l) => l !== '');
  const [header, ...data] = lines;
  // Half the rows get the age of another random row: new (age, …) combinations, so the
  // table is not just Adult repeated (which would be k-anonymous as it stands).
  const cells = data.map((l) => l.split(';'));
  const ageAt = header!.split(';').indexOf('age');
  const random = new Random(20261122);
  await writeRows(join(dir, 'adult.csv'), header!, rows, () => {
    const row = cells[random.below(cells.length)]!;
    if (ageAt < 0 || random.below(2) !== 0) return row.join(';');
    const other = cells[random.below(cells.length)]!;
    return row.map((v, i) => (i === ageAt ? other[i] : v)).join(';');
  });
  return { dir, spec: join(dir, 'release.json'), bytes: Number(readFileSync(join(dir, 'adult.csv')).length) };
}

/** Writes a header and `rows` lines made by `line(r)` to a file, 10,000 lines a write. */
export async function writeRows(path: string, header: string, rows: number, line: (r: number) => string) {
  const out = createWriteStream(path);
  out.write(`${header}\n`);
  let chunk: string[] = [];
  for (let r = 0; r < rows; r++) {
    chunk.push(line(r));
    if (chunk.length === 10_000) {
      if (!out.write(`${chunk.join('\n')}\n`))
        await new Promise<void>((done) => out.once('drain', () => done()));
      chunk = [];
    }
  }
  if (chunk.length > 0) out.write(`${chunk.join('\n')}\n`);
  await new Promise<void>((resolve) => out.end(() => resolve()));
}
