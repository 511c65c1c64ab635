/**
 * Independent verification of a generalization release. It shares nothing with the search:
 * it re-reads the staged files, works on strings (not codes or level tables), regenerates
 * every input row at the reported node straight from the hierarchy rows, and checks the
 * claims. A release that fails any check is not published.
 */
import type { EncodedTable } from '../data/table.ts';
import type { VerificationCheck } from '../report/types.ts';
import type { AttributeSpec, PrivacyModelSpec } from '../spec/spec.ts';
import { bump, type DecodedTable, decodeTable, fail, SEP, sameTable } from './common.ts';
import { checkClass, type SensitiveContext, type ValueCounts } from './models.ts';

export { type DecodedTable, decodeTable };

export interface GeneralizationClaims {
  readonly node: Readonly<Record<string, number>>;
  /** Every model of the spec: each released class must satisfy all of them. */
  readonly privacy: readonly PrivacyModelSpec[];
  readonly k: number;
  readonly maxSuppressedRows: number;
  readonly suppressedRows: number;
  readonly classes: number;
  readonly minClassSize: number;
  readonly suppressed: 'mask' | 'remove';
}

/**
 * Checks a release. `hierarchyRows` holds, per QI, the hierarchy as string rows
 * `[value, level1, …]`. Throws VerificationError listing the failed checks; returns all checks.
 */
export function verifyGeneralization(args: {
  input: EncodedTable;
  attributes: readonly AttributeSpec[];
  hierarchyRows: ReadonlyMap<string, string[][]>;
  arrow: DecodedTable;
  csv: DecodedTable;
  claims: GeneralizationClaims;
  /** Per sensitive attribute a model names: its input distribution and hierarchy. */
  sensitive: ReadonlyMap<string, SensitiveContext>;
}): VerificationCheck[] {
  const { input, attributes, hierarchyRows, arrow, csv, claims, sensitive } = args;
  const checks: VerificationCheck[] = [];
  const add = (name: string, passed: boolean, detail: string) => checks.push({ name, passed, detail });

  // 1. The two files hold the same table.
  const same = sameTable(arrow, csv);
  add(
    'csv-equals-arrow',
    same,
    same ? 'data.csv and data.arrow hold the same rows' : 'data.csv and data.arrow differ',
  );

  // 2. No identifying column is released; every other input column is.
  const typeOf = new Map(attributes.map((a) => [a.name, a.type]));
  const expectedNames = input.columns.map((c) => c.name).filter((n) => typeOf.get(n) !== 'identifying');
  const namesOk = arrow.names.join(SEP) === expectedNames.join(SEP);
  add(
    'columns',
    namesOk,
    namesOk
      ? 'identifying columns dropped, all others released'
      : `released columns: ${arrow.names.join(', ')}`,
  );
  if (!namesOk) return fail(checks);

  // 3. The released rows are exactly the input rows generalized at the node (a multiset
  //    match), except for suppressed rows.
  const qis = expectedNames.filter((n) => typeOf.get(n) === 'quasi-identifying');
  const qiIndex = qis.map((q) => expectedNames.indexOf(q));
  const otherIndex = expectedNames.map((_, i) => i).filter((i) => !qiIndex.includes(i));
  const generalize = qis.map((q) => {
    const level = claims.node[q]!;
    return new Map((hierarchyRows.get(q) ?? []).map((row) => [row[0]!, row[level]!]));
  });
  const inputCols = expectedNames.map((n) => input.columns.find((c) => c.name === n)!);
  const expected = new Map<string, number>();
  const expectedOther = new Map<string, number>();
  let unmapped = 0;
  for (let r = 0; r < input.rowCount; r++) {
    const cells = inputCols.map((c) => c.dictionary[c.codes[r]!]!);
    qiIndex.forEach((ci, q) => {
      const label = generalize[q]!.get(cells[ci]!);
      if (label === undefined) unmapped++;
      cells[ci] = label ?? '\u0001';
    });
    bump(expected, cells.join(SEP), 1);
    bump(expectedOther, otherIndex.map((i) => cells[i]).join(SEP), 1);
  }
  const releasedRows = arrow.columns[0]?.length ?? 0;
  const classes = new Map<string, number>();
  const saIndex = [...sensitive.keys()].map((name) => expectedNames.indexOf(name));
  const classCounts = new Map<string, ValueCounts[]>();
  let masked = 0;
  let mismatched = 0;
  for (let j = 0; j < releasedRows; j++) {
    const cells = arrow.columns.map((c) => c[j]!);
    const isMasked = qiIndex.every((ci) => cells[ci] === '*');
    if (isMasked && claims.suppressed === 'mask' && (expected.get(cells.join(SEP)) ?? 0) === 0) {
      masked++;
      if (!bump(expectedOther, otherIndex.map((i) => cells[i]).join(SEP), -1)) mismatched++;
      continue;
    }
    const key = cells.join(SEP);
    if (!bump(expected, key, -1)) mismatched++;
    else bump(expectedOther, otherIndex.map((i) => cells[i]).join(SEP), -1);
    const cls = qiIndex.map((ci) => cells[ci]).join(SEP);
    bump(classes, cls, 1);
    let counts = classCounts.get(cls);
    if (!counts) classCounts.set(cls, (counts = saIndex.map(() => new Map())));
    saIndex.forEach((ci, j) => {
      counts[j]!.set(cells[ci]!, (counts[j]!.get(cells[ci]!) ?? 0) + 1);
    });
  }
  const retainedRows = releasedRows - masked;
  const suppressed = input.rowCount - retainedRows;
  const rowsOk =
    unmapped === 0 &&
    mismatched === 0 &&
    (claims.suppressed === 'mask' ? releasedRows === input.rowCount : masked === 0);
  add(
    'rows-generalize-input',
    rowsOk,
    rowsOk
      ? `every released row is an input row generalized at the reported node (${retainedRows} retained)`
      : `${mismatched} released rows match no input row at the node; ${unmapped} input cells outside the hierarchies`,
  );

  // 4. Suppression within the limit and as claimed.
  const supOk = suppressed === claims.suppressedRows && suppressed <= claims.maxSuppressedRows;
  add(
    'suppression',
    supOk,
    `${suppressed} rows suppressed (claimed ${claims.suppressedRows}, limit ${claims.maxSuppressedRows})`,
  );

  // 5. Every model on every released class, recomputed from the released values.
  let minSize = Number.POSITIVE_INFINITY;
  for (const size of classes.values()) minSize = Math.min(minSize, size);
  if (classes.size === 0) minSize = 0;
  const saNames = [...sensitive.keys()];
  for (const model of claims.privacy) {
    const attribute = 'attribute' in model ? model.attribute : undefined;
    const j = attribute === undefined ? -1 : saNames.indexOf(attribute);
    let failing = 0;
    let worst: number | undefined;
    for (const [cls, size] of classes) {
      const r = checkClass(
        model,
        size,
        j >= 0 ? classCounts.get(cls)![j] : undefined,
        j >= 0 ? sensitive.get(attribute!) : undefined,
      );
      if (!r.holds) failing++;
      if (
        worst === undefined ||
        (['k-anonymity', 'distinct-l-diversity', 'entropy-l-diversity'].includes(model.model)
          ? r.value < worst
          : r.value > worst)
      )
        worst = r.value;
    }
    add(
      model.model,
      failing === 0,
      `${classes.size} classes, ${failing} failing; worst class: ${worst === undefined ? '—' : Number(worst.toPrecision(6))}${attribute ? ` (${attribute})` : ''}`,
    );
  }
  const claimOk = classes.size === claims.classes && minSize === claims.minClassSize;
  add(
    'reported-classes',
    claimOk,
    `report claims ${claims.classes} classes, smallest ${claims.minClassSize}; found ${classes.size}, smallest ${minSize}`,
  );
  return checks.every((c) => c.passed) ? checks : fail(checks);
}
