/**
 * Independent verification of an Anatomy release. It shares no code with the bucketization:
 * it re-reads the staged QIT, ST and single-table files as strings and checks them against the
 * input's strings.
 *
 * The builder hands over a witness — the released bucket of every input row (kept in memory,
 * never published). A witness that passes proves the release truthful: the QIT is exactly the
 * input's rows (a multiset match, per bucket), the ST is exactly the SA values of those rows per
 * bucket (so every input row's SA is in its bucket), and no witness can pass for files that are
 * not. The l-diversity check reads the ST alone.
 */
import type { TauOfLModel } from '../catalogue/catalogue.ts';
import { DISTINCT_L_DIVERSITY } from '../catalogue/l-diversity.ts';
import type { VerificationCheck } from '../contracts/report.ts';
import type { EncodedTable } from '../data/table.ts';
import type { AttributeSpec } from '../release-spec/spec.ts';
import { entropyRounding } from '../util/exact.ts';
import { bump, type DecodedTable, fail, releasedNames, SEP, sameTable } from './common.ts';
import { asCsvDecoded } from './staged-csv.ts';

export interface StagedPair {
  readonly arrow: DecodedTable;
  readonly csv: DecodedTable;
}

export interface AnatomyObservations {
  readonly buckets: number;
  /** Input row → released bucket id (the witness). */
  readonly bucketOfRow: Int32Array;
}

export interface AnatomyVerifyInput {
  input: EncodedTable;
  attributes: readonly AttributeSpec[];
  sensitive: string;
  model: TauOfLModel;
  l: number;
  qit: StagedPair;
  st: StagedPair;
  data: StagedPair;
  /** The spec's `format.escapeFormulas`: the CSVs hold their cells formula-escaped. */
  escapeFormulas?: boolean;
  claims: AnatomyObservations;
}

type Add = (name: string, passed: boolean, detail: string) => void;

/** The released columns, and the input's rows as the checks read them. */
interface Context {
  readonly n: number;
  readonly released: string[];
  readonly qitNames: string[];
  readonly inputQi: ((r: number) => string)[];
  readonly inputSa: (r: number) => string;
  /** The bucket the claims put each input row in. */
  readonly witness: (r: number) => string;
}

/** Each bucket's SA values with their counts, as the ST states them. */
type StCounts = Map<string, Map<string, number>>;

/**
 * The checks, in order: each file's CSV and Arrow agree, the columns, the QIT's rows, the ST's
 * counts, every SA in its bucket, l-diversity from the ST alone, the single table, the claims.
 */
export function verifyAnatomy(args: AnatomyVerifyInput): VerificationCheck[] {
  const checks: VerificationCheck[] = [];
  const add: Add = (name, passed, detail) => checks.push({ name, passed, detail });
  checkFilePairs(args, add);
  const ctx = checkColumns(args, add);
  if (!ctx) return fail(checks);
  const { qitRows, bucketSize } = checkQit(args, ctx, add);
  const stCounts = checkSt(args, bucketSize, add);
  checkSaInBucket(ctx, stCounts, add);
  checkLDiversity(args, stCounts, add);
  checkSingleTable(args, ctx, qitRows, stCounts, add);
  const claimOk = bucketSize.size === args.claims.buckets;
  add('reported-buckets', claimOk, `report claims ${args.claims.buckets} buckets; found ${bucketSize.size}`);
  return checks.every((c) => c.passed) ? checks : fail(checks);
}

/** Each file's CSV and Arrow forms hold the same table. */
function checkFilePairs({ qit, st, data, escapeFormulas }: AnatomyVerifyInput, add: Add): void {
  for (const [name, pair] of [
    ['qit', qit],
    ['st', st],
    ['data', data],
  ] as const) {
    const same = sameTable(asCsvDecoded(pair.arrow, escapeFormulas === true), pair.csv);
    add(
      `${name}-csv-equals-arrow`,
      same,
      same ? `${name}.csv and ${name}.arrow hold the same rows` : `${name}.csv and ${name}.arrow differ`,
    );
  }
}

/** No identifying column; QIT = released columns but the SA, + bucket; ST; data. */
function checkColumns(args: AnatomyVerifyInput, add: Add): Context | undefined {
  const { input, attributes, sensitive, qit, st, data, claims } = args;
  const released = releasedNames(input, attributes);
  const qitNames = released.filter((n) => n !== sensitive);
  const expect = (table: DecodedTable, names: string[]) => table.names.join(SEP) === names.join(SEP);
  const columnsOk =
    expect(qit.arrow, [...qitNames, 'bucket']) &&
    expect(st.arrow, ['bucket', sensitive, 'count']) &&
    expect(data.arrow, [...released, 'bucket']);
  add(
    'columns',
    columnsOk,
    columnsOk
      ? 'identifying columns dropped; QIT, ST and single table have the documented columns'
      : `released columns: qit [${qit.arrow.names.join(', ')}], st [${st.arrow.names.join(', ')}], data [${data.arrow.names.join(', ')}]`,
  );
  if (!columnsOk) return undefined;
  const inputCol = (name: string) => {
    const c = input.columns.find((x) => x.name === name)!;
    return (r: number) => c.dictionary[c.codes[r]!]!;
  };
  return {
    n: input.rowCount,
    released,
    qitNames,
    inputQi: qitNames.map(inputCol),
    inputSa: inputCol(sensitive),
    witness: (r: number) => String(claims.bucketOfRow[r]!),
  };
}

/** QIT rows = the input's rows (multiset), each in the bucket the witness names. */
function checkQit(
  { qit }: AnatomyVerifyInput,
  { n, qitNames, inputQi, witness }: Context,
  add: Add,
): { qitRows: number; bucketSize: Map<string, number> } {
  const qitRows = qit.arrow.columns[0]?.length ?? 0;
  const qitBucket = qit.arrow.columns[qitNames.length]!;
  const expectedQit = new Map<string, number>();
  for (let r = 0; r < n; r++) {
    bump(expectedQit, inputQi.map((f) => f(r)).join(SEP) + SEP + witness(r), 1);
  }
  let qitMismatch = 0;
  const bucketSize = new Map<string, number>();
  for (let j = 0; j < qitRows; j++) {
    const key = qit.arrow.columns.map((c) => c[j]!).join(SEP);
    if (!bump(expectedQit, key, -1)) qitMismatch++;
    bump(bucketSize, qitBucket[j]!, 1);
  }
  const qitOk = qitRows === n && qitMismatch === 0;
  add(
    'qit-rows',
    qitOk,
    qitOk
      ? `the QIT holds exactly the input's ${n} rows (quasi-identifiers unchanged), each in its bucket`
      : `${qitMismatch} QIT rows match no input row in their bucket (${qitRows} rows for ${n} input rows)`,
  );

  return { qitRows, bucketSize };
}

/** ST: well-formed counts; per bucket the counts add up to the QIT's bucket size. */
function checkSt({ st }: AnatomyVerifyInput, bucketSize: Map<string, number>, add: Add): StCounts {
  const stRows = st.arrow.columns[0]?.length ?? 0;
  const [stBucket, stSa, stCount] = st.arrow.columns as [string[], string[], string[]];
  const stCounts = new Map<string, Map<string, number>>();
  let malformed = 0;
  for (let j = 0; j < stRows; j++) {
    const count = Number(stCount[j]);
    const values = stCounts.get(stBucket[j]!) ?? new Map<string, number>();
    stCounts.set(stBucket[j]!, values);
    if (!Number.isInteger(count) || count <= 0 || values.has(stSa[j]!)) {
      malformed++;
      continue;
    }
    values.set(stSa[j]!, count);
  }
  let sizeMismatch = 0;
  for (const [b, values] of stCounts) {
    let total = 0;
    for (const c of values.values()) total += c;
    if (total !== (bucketSize.get(b) ?? 0)) sizeMismatch++;
  }
  for (const b of bucketSize.keys()) if (!stCounts.has(b)) sizeMismatch++;
  const stOk = malformed === 0 && sizeMismatch === 0;
  add(
    'st-consistent',
    stOk,
    stOk
      ? `the ST's counts add up to the QIT's bucket sizes in all ${bucketSize.size} buckets`
      : `${malformed} malformed ST rows, ${sizeMismatch} buckets whose ST counts differ from the QIT`,
  );

  return stCounts;
}

/** Every input row's SA is counted in its bucket: the witness's (bucket, SA) multiset is the ST. */
function checkSaInBucket({ n, inputSa, witness }: Context, stCounts: StCounts, add: Add): void {
  const expectedSt = new Map<string, number>();
  const saMultiset = new Map<string, number>();
  for (let r = 0; r < n; r++) {
    bump(expectedSt, witness(r) + SEP + inputSa(r), 1);
    bump(saMultiset, inputSa(r), 1);
  }
  let stMismatch = 0;
  for (const [b, values] of stCounts) {
    for (const [s, c] of values) {
      if (!bump(expectedSt, b + SEP + s, -c)) stMismatch++;
      if (!bump(saMultiset, s, -c)) stMismatch++;
    }
  }
  const saOk = stMismatch === 0 && expectedSt.size === 0 && saMultiset.size === 0;
  add(
    'sa-in-bucket',
    saOk,
    saOk
      ? "every input row's sensitive value is counted in its bucket; the ST holds exactly the input's values"
      : `${stMismatch} ST entries and ${expectedSt.size} input (bucket, value) pairs do not match`,
  );
}

/** l-diversity of every bucket, from the ST alone. */
function checkLDiversity({ sensitive, model, l }: AnatomyVerifyInput, stCounts: StCounts, add: Add): void {
  let worstDistinct = Number.POSITIVE_INFINITY;
  let worstEntropy = Number.POSITIVE_INFINITY;
  let entropyOk = true;
  const logL = Math.log(l);
  for (const values of stCounts.values()) {
    let total = 0;
    for (const c of values.values()) total += c;
    let h = 0;
    for (const c of values.values()) h -= (c / total) * Math.log(c / total);
    worstDistinct = Math.min(worstDistinct, values.size);
    worstEntropy = Math.min(worstEntropy, Math.exp(h));
    // Logs are no ratios of integers: only rounding's slack (entropyRounding).
    if (h < logL - entropyRounding(values.size, Math.max(h, logL))) entropyOk = false;
  }
  const lOk = stCounts.size > 0 && (model === DISTINCT_L_DIVERSITY.name ? worstDistinct >= l : entropyOk);
  add(
    'l-diversity',
    lOk,
    `${stCounts.size} buckets; fewest distinct ${sensitive} values ${worstDistinct}, smallest exp(entropy) ` +
      `${worstEntropy.toFixed(4)} (${model}, l = ${l})`,
  );
}

/** The single table: the QIT's rows in the same order, the SA a permutation within each bucket. */
function checkSingleTable(
  { qit, data, sensitive }: AnatomyVerifyInput,
  { released }: Context,
  qitRows: number,
  stCounts: StCounts,
  add: Add,
): void {
  const dataRows = data.arrow.columns[0]?.length ?? 0;
  const saAt = released.indexOf(sensitive);
  let rowMismatch = dataRows === qitRows ? 0 : Math.abs(dataRows - qitRows) || 1;
  const dataSa = new Map<string, Map<string, number>>();
  for (let j = 0; j < Math.min(dataRows, qitRows); j++) {
    let k = 0;
    for (let i = 0; i < data.arrow.names.length; i++) {
      if (i === saAt) continue;
      if (data.arrow.columns[i]![j] !== qit.arrow.columns[k]![j]) {
        rowMismatch++;
        break;
      }
      k++;
    }
    const b = data.arrow.columns[released.length]![j]!;
    const values = dataSa.get(b) ?? new Map<string, number>();
    dataSa.set(b, values);
    bump(values, data.arrow.columns[saAt]![j]!, 1);
  }
  let permMismatch = 0;
  for (const [b, values] of stCounts) {
    const shown = dataSa.get(b) ?? new Map<string, number>();
    if (shown.size !== values.size) permMismatch++;
    else for (const [s, c] of values) if (shown.get(s) !== c) permMismatch++;
  }
  for (const b of dataSa.keys()) if (!stCounts.has(b)) permMismatch++;
  const dataOk = rowMismatch === 0 && permMismatch === 0;
  add(
    'single-table',
    dataOk,
    dataOk
      ? 'data.csv is the QIT with the SA column permuted within each bucket'
      : `${rowMismatch} rows differ from the QIT, ${permMismatch} buckets whose SA values differ from the ST`,
  );
}
