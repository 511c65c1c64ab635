/**
 * The benchmarks' larger public table: Fertility (bench/data/fertility, its README says what it
 * is), 254,654 rows from the 1980 United States Census, every column a quasi-identifier. Kept
 * compressed in the repository and unpacked here into a folder of its own, beside its
 * hierarchies and its release spec.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

export const FERTILITY = new URL('./data/fertility', import.meta.url).pathname;

/** A data-independent node of Fertility's lattice: the level per quasi-identifier the DP bench fixes. */
export const FERTILITY_DP_LEVELS: Readonly<Record<string, number>> = {
  morekids: 0,
  gender1: 1,
  gender2: 1,
  age: 1,
  afam: 0,
  hispanic: 0,
  other: 0,
  work: 1,
};

/** Fertility unpacked into `dir` (made if absent): fertility.csv, its hierarchies and release.json. */
export function unpackFertility(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(FERTILITY))
    if (f.endsWith('.csv') || f === 'release.json') copyFileSync(join(FERTILITY, f), join(dir, f));
  writeFileSync(join(dir, 'fertility.csv'), gunzipSync(readFileSync(join(FERTILITY, 'fertility.csv.gz'))));
  return dir;
}
