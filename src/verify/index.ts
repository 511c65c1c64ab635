/**
 * The verifier of each method, as the Verify state runs it: given the spec, the encoded input,
 * the method's claims (JSON, as the method stated them) and where the staged files are, it
 * reads the staged files itself and re-checks every claim with code independent of the code
 * that built the release (no import from src/methods/ or the hierarchy builders). Each check
 * is returned; a failed one throws VerificationError and nothing is published.
 */
import { DISTINCT_L_DIVERSITY, ENTROPY_L_DIVERSITY } from '../catalogue/l-diversity.ts';
import { type ClaimsOf, readClaims } from '../claims/index.ts';
import type { VerificationCheck } from '../contracts/report.ts';
import { readArrow } from '../data/arrow.ts';
import { readCsv } from '../data/csv.ts';
import { codeCounts, type EncodedTable } from '../data/table.ts';
import {
  entityOf,
  type GeneralizationMethodSpec,
  type MethodName,
  type ReleaseSpec,
  writesParquet,
} from '../release-spec/spec.ts';
import { verifyAnatomy } from './anatomy.ts';
import { verifyCellSuppression } from './cell-suppression.ts';
import { decodeTable, fail, releasedNames } from './common.ts';
import { inputPersons } from './entity.ts';
import { type GeneralizationClaims, verifyGeneralization } from './generalization.ts';
import {
  checkWhole,
  expectShard,
  type PartFacts,
  type PartSummary,
  PiecesCheck,
  type ShardExpectation,
  type ShardFacts,
  shardBytesHashes,
  summarizePart,
} from './generalization-parts.ts';
import { verifierHierarchyRows } from './hierarchy.ts';
import type { SensitiveContext } from './models.ts';
import { verifyMondrian } from './mondrian.ts';
import { populationClasses } from './population.ts';
import { verifyRandomization } from './randomization.ts';
import {
  diversityRequirements,
  generalizationRequirements,
  randomizationRequirements,
  whenEnforcedAsSpec,
} from './requirements.ts';
import { verifySlicing } from './slicing.ts';

export interface VerifyInput {
  readonly spec: ReleaseSpec;
  /** The encoded input, as the method read it. */
  readonly table: EncodedTable;
  /**
   * What the method claims about its release (its `claims`, as JSON): checked against the
   * contract (src/claims/) first. Requirements are read from the spec, never from the claims.
   */
  readonly claims: unknown;
  /** The local path of a staged file. */
  readonly staged: (name: string) => string;
}

export interface Verifier {
  verify(input: VerifyInput): VerificationCheck[];
}

const VERIFIERS: Record<MethodName, Verifier> = {
  generalization: { verify: generalization },
  mondrian: { verify: mondrian },
  anatomy: { verify: anatomy },
  slicing: { verify: slicing },
  randomization: { verify: randomization },
};

export function verifierFor(method: MethodName): Verifier {
  return VERIFIERS[method];
}

function generalization({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const c = readClaims(claims, 'generalization');
  // With an entity column, the persons the suppression limit counts: from the input's own column.
  const required = generalizationRequirements(spec, table.rowCount, inputPersons(table, spec.attributes));
  const hierarchyRows = rowsOf(spec, table, (a) => a.type === 'quasi-identifying');
  if ((spec.method as GeneralizationMethodSpec).suppression === 'cells') {
    return whenEnforcedAsSpec(c.enforced, required, () =>
      verifyCellSuppression({
        input: table,
        attributes: spec.attributes,
        hierarchyRows,
        arrow: staged('data.arrow'),
        csv: staged('data.csv'),
        ...(writesParquet(spec) ? { parquet: staged('data.parquet') } : {}),
        escapeFormulas: spec.format.escapeFormulas === true,
        claims: { ...required, ...c, cells: c.cells?.perAttribute ?? {} },
      }),
    );
  }
  return whenEnforcedAsSpec(c.enforced, required, () =>
    verifyGeneralization({
      input: table,
      attributes: spec.attributes,
      hierarchyRows,
      population: populationClasses(spec, releasedQis(table, spec), c.node, hierarchyRows),
      arrow: staged('data.arrow'),
      csv: staged('data.csv'),
      ...(writesParquet(spec) ? { parquet: staged('data.parquet') } : {}),
      escapeFormulas: spec.format.escapeFormulas === true,
      sensitive: sensitiveContexts(spec, table),
      claims: checkedClaims(spec, c, required),
    }),
  );
}

/** The generalization verifier's claims: the method's observations, the spec's requirements. */
function checkedClaims(
  spec: ReleaseSpec,
  c: ClaimsOf<'generalization'>,
  required: ReturnType<typeof generalizationRequirements>,
): GeneralizationClaims {
  const { node, suppressedRows, classes, minClassSize, dp, entity } = c;
  return { node, suppressedRows, classes, minClassSize, dp, entity, privacy: spec.privacy, ...required };
}

function mondrian({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const { numeric, generalized, classes, minClassSize, ncp } = readClaims(claims, 'mondrian');
  return verifyMondrian({
    input: table,
    attributes: spec.attributes,
    privacy: spec.privacy,
    numeric,
    hierarchyRows: rowsOf(spec, table, (a) => a.type === 'sensitive' || generalized.includes(a.name)),
    arrow: readArrow(staged('data.arrow')),
    csv: readCsv(staged('data.csv'), { delimiter: table.delimiter }),
    escapeFormulas: spec.format.escapeFormulas === true,
    claims: { classes, minClassSize, ncp },
  });
}

function anatomy({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const c = readClaims(claims, 'anatomy');
  const required = diversityRequirements(spec, [DISTINCT_L_DIVERSITY.name, ENTROPY_L_DIVERSITY.name]);
  return whenEnforcedAsSpec(c.enforced, required, () => {
    const pair = stagedPair(table, staged);
    return verifyAnatomy({
      input: table,
      attributes: spec.attributes,
      sensitive: required.sensitive,
      model: required.model,
      l: required.l,
      qit: pair('qit'),
      st: pair('st'),
      data: pair('data'),
      escapeFormulas: spec.format.escapeFormulas === true,
      claims: { buckets: c.buckets, bucketOfRow: Int32Array.from(c.bucketOfRow) },
    });
  });
}

function slicing({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const c = readClaims(claims, 'slicing');
  const { sensitive, l } = diversityRequirements(spec, [DISTINCT_L_DIVERSITY.name]);
  return whenEnforcedAsSpec(c.enforced, { sensitive, l }, () =>
    verifySlicing({
      input: table,
      attributes: spec.attributes,
      sensitive,
      l,
      data: stagedPair(table, staged)('data'),
      escapeFormulas: spec.format.escapeFormulas === true,
      claims: { buckets: c.buckets, bucketOfRow: Int32Array.from(c.bucketOfRow), columns: c.columns },
    }),
  );
}

function randomization({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const c = readClaims(claims, 'randomization');
  const { sensitive, tau, rho } = randomizationRequirements(spec);
  return whenEnforcedAsSpec(c.enforced, { sensitive, tau, rho }, () =>
    verifyRandomization({
      spec,
      input: table,
      dataArrow: staged('data.arrow'),
      dataCsv: staged('data.csv'),
      matrices: staged('matrices.json'),
      claims: c,
    }),
  );
}

/** A staged table read twice, from its Arrow file and from its CSV with the CSV reader. */
function stagedPair(table: EncodedTable, staged: (name: string) => string) {
  return (name: string) => ({
    arrow: decodeTable(readArrow(staged(`${name}.arrow`))),
    csv: decodeTable(readCsv(staged(`${name}.csv`), { delimiter: table.delimiter })),
  });
}

/** The verifier's own hierarchy rows of the attributes `pick` chooses (those with a hierarchy). */
function rowsOf(
  spec: ReleaseSpec,
  table: EncodedTable,
  pick: (a: ReleaseSpec['attributes'][number]) => boolean,
): Map<string, string[][]> {
  return new Map(
    spec.attributes
      .filter((a) => a.hierarchy !== undefined && pick(a))
      .map((a) => [
        a.name,
        verifierHierarchyRows(table.columns.find((c) => c.name === a.name)!, a.hierarchy!),
      ]),
  );
}

/** Each sensitive attribute a model names: its share of each value over the input, and its hierarchy. */
function sensitiveContexts(spec: ReleaseSpec, table: EncodedTable): Map<string, SensitiveContext> {
  return new Map(
    modelAttributes(spec).map((name) => {
      const column = table.columns.find((c) => c.name === name)!;
      const rows = codeCounts(column);
      const share = new Map<string, number>();
      const counts = new Map<string, number>();
      column.dictionary.forEach((value, code) => {
        if (rows[code]! > 0) {
          share.set(value, (share.get(value) ?? 0) + rows[code]! / table.rowCount);
          counts.set(value, (counts.get(value) ?? 0) + rows[code]!);
        }
      });
      const hierarchy = spec.attributes.find((a) => a.name === name)!.hierarchy;
      return [
        name,
        {
          table: share,
          hierarchy: hierarchy ? verifierHierarchyRows(column, hierarchy) : undefined,
          rows: { counts, total: table.rowCount },
        },
      ];
    }),
  );
}

/**
 * Verification in pieces (sharded generalization, src/verify/generalization-parts.ts): each
 * input shard's expectation, each output part's summary, both split into `partitions`, and
 * the reduce over both, a partition at a time. `values` holds the input's columns with every
 * value in their dictionaries (the last shard's: each shard's codes index them); its rows are
 * not needed.
 */
export const pieces = {
  expectShard(
    spec: ReleaseSpec,
    claims: unknown,
    shard: EncodedTable,
    values: EncodedTable,
    partitions = 1,
    /** The hashes of the columns held as bytes the shard was read without (`hashShardBytes`). */
    bytesHashed?: ReadonlyMap<string, Int32Array>,
  ): ShardExpectation {
    const { node } = readClaims(claims, 'generalization');
    // The input's columns in order, each with the input's values: a column read without its
    // rows (its bytes hashed beside the search) stands in with none.
    const read = new Map(shard.columns.map((c) => [c.name, c]));
    const columns = values.columns.map((v) => {
      const c = read.get(v.name);
      if (c) return { ...c, dictionary: v.dictionary };
      if (!bytesHashed?.has(v.name)) throw new RangeError(`the shard was read without column ${v.name}`);
      return { name: v.name, dictionary: [], codes: new Int32Array(0) };
    });
    return expectShard({
      shard: { ...shard, columns },
      attributes: spec.attributes,
      hierarchyRows: rowsOf(spec, values, (a) => a.type === 'quasi-identifying'),
      node,
      sensitive: modelAttributes(spec),
      partitions,
      bytesHashed,
    });
  },

  /** The rows' hashes of a shard's columns held as bytes (`bytes`), as `expectShard` takes them. */
  hashShardBytes(spec: ReleaseSpec, values: EncodedTable, bytes: EncodedTable): Map<string, Int32Array> {
    return shardBytesHashes(
      values.columns.map((c) => c.name),
      spec.attributes,
      bytes,
    );
  },

  summarizePart(
    spec: ReleaseSpec,
    delimiter: string,
    files: { arrow: string; csv: string; parquet?: string | undefined },
    partitions = 1,
  ): PartSummary {
    return summarizePart({
      ...files,
      delimiter,
      escapeFormulas: spec.format.escapeFormulas === true,
      attributes: spec.attributes,
      sensitive: modelAttributes(spec),
      partitions,
    });
  },

  /** The reduce over slices held whole (every partition in turn): the checks. */
  check(
    spec: ReleaseSpec,
    values: EncodedTable,
    claims: unknown,
    shards: readonly ShardExpectation[],
    parts: readonly PartSummary[],
    inputRows?: number,
  ): VerificationCheck[] {
    return checkWhole(pieces.checker(spec, values, claims, shards, parts, inputRows), shards, parts);
  },

  /**
   * The reduce: `add` each partition of every slice, then `finish`. `inputRows`: the input's
   * rows when the shards hold a secret sample of them ((ε, δ)-differential privacy).
   */
  checker(
    spec: ReleaseSpec,
    values: EncodedTable,
    claims: unknown,
    shards: readonly ShardFacts[],
    parts: readonly PartFacts[],
    inputRows?: number,
  ): PiecesCheck {
    const c = readClaims(claims, 'generalization');
    // A person's rows may lie in several shards: a release in pieces cannot count persons.
    if (entityOf(spec) !== undefined)
      fail([{ name: 'persons', passed: false, detail: 'a release checked in pieces cannot count persons' }]);
    const rows = shards.reduce((n, s) => n + s.rows, 0);
    // A sample's suppression limit is over the input's rows, as in one task.
    const required = generalizationRequirements(spec, inputRows ?? rows);
    const sensitive = new Map(
      modelAttributes(spec).map((name) => {
        const counts = new Map<string, number>();
        for (const s of shards)
          for (const [v, n] of Object.entries(s.sensitive[name] ?? {}))
            counts.set(v, (counts.get(v) ?? 0) + n);
        const share = new Map([...counts].map(([v, n]) => [v, n / rows]));
        const hierarchy = spec.attributes.find((a) => a.name === name)!.hierarchy;
        const column = values.columns.find((c) => c.name === name)!;
        return [
          name,
          {
            table: share,
            hierarchy: hierarchy ? verifierHierarchyRows(column, hierarchy) : undefined,
            rows: { counts, total: rows },
          },
        ] as const;
      }),
    );
    const hierarchyRows = rowsOf(spec, values, (a) => a.type === 'quasi-identifying');
    return whenEnforcedAsSpec(
      c.enforced,
      required,
      () =>
        new PiecesCheck({
          names: releasedNames(values, spec.attributes),
          attributes: spec.attributes,
          shards,
          parts,
          sensitive,
          population: populationClasses(spec, releasedQis(values, spec), c.node, hierarchyRows),
          claims: checkedClaims(spec, c, required),
          parquet: writesParquet(spec),
          ...(inputRows !== undefined ? { inputRows } : {}),
        }),
    );
  },
};

/** The quasi-identifiers in the order the release holds them. */
function releasedQis(table: EncodedTable, spec: ReleaseSpec): string[] {
  const qi = new Set(spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name));
  return releasedNames(table, spec.attributes).filter((n) => qi.has(n));
}

/** The attributes the spec's models name. */
function modelAttributes(spec: ReleaseSpec): string[] {
  return [...new Set(spec.privacy.flatMap((m) => ('attribute' in m ? [m.attribute] : [])))];
}
