/**
 * The verifier of each method, as the Verify state runs it: given the spec, the encoded input,
 * the method's claims (JSON, as the method stated them) and where the staged files are, it
 * reads the staged files itself and re-checks every claim with code independent of the code
 * that built the release (no import from src/methods/ or the hierarchy builders). Each check
 * is returned; a failed one throws VerificationError and nothing is published.
 */
import { readArrow } from '../data/arrow.ts';
import { readCsv } from '../data/csv.ts';
import { codeCounts, type EncodedTable } from '../data/table.ts';
import type { VerificationCheck } from '../report/types.ts';
import type { MethodName, ReleaseSpec } from '../spec/spec.ts';
import { type AnatomyClaims, verifyAnatomy } from './anatomy.ts';
import { decodeTable, releasedNames } from './common.ts';
import { type GeneralizationClaims, verifyGeneralization } from './generalization.ts';
import {
  expectShard,
  type PartFacts,
  type PartSummary,
  PiecesCheck,
  type ShardExpectation,
  type ShardFacts,
  summarizePart,
} from './generalization-parts.ts';
import { verifierHierarchyRows } from './hierarchy.ts';
import type { SensitiveContext } from './models.ts';
import { type MondrianClaims, verifyMondrian } from './mondrian.ts';
import { type RandomizationClaims, verifyRandomization } from './randomization.ts';
import { type SlicingClaims, verifySlicing } from './slicing.ts';

export interface VerifyInput {
  readonly spec: ReleaseSpec;
  /** The encoded input, as the method read it. */
  readonly table: EncodedTable;
  /** What the method claims about its release (its `claims`, as JSON). */
  readonly claims: unknown;
  /** The local path of a staged file. */
  readonly staged: (name: string) => string;
}

export interface Verifier {
  verify(input: VerifyInput): VerificationCheck[];
}

/** What the generalization method claims: the search's outcome. */
export type GeneralizationClaimsOfMethod = Omit<GeneralizationClaims, 'privacy' | 'suppressed'>;

/** What Mondrian claims: its classes, and which quasi-identifiers it cut as numbers. */
export type MondrianClaimsOfMethod = MondrianClaims & {
  readonly numeric: readonly string[];
  /** Quasi-identifiers released as hierarchy labels (the others are numeric ranges). */
  readonly generalized: readonly string[];
};

/** What Anatomy and Slicing claim: the requirement they enforced and each row's bucket. */
interface BucketClaims {
  readonly sensitive: string;
  readonly l: number;
  readonly buckets: number;
  readonly bucketOfRow: readonly number[];
}
export type AnatomyClaimsOfMethod = BucketClaims & {
  readonly model: 'distinct-l-diversity' | 'entropy-l-diversity';
};
export type SlicingClaimsOfMethod = BucketClaims & { readonly columns: readonly (readonly string[])[] };

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
  const method = spec.method as Extract<ReleaseSpec['method'], { name: 'generalization' }>;
  return verifyGeneralization({
    input: table,
    attributes: spec.attributes,
    hierarchyRows: rowsOf(spec, table, (a) => a.type === 'quasi-identifying'),
    arrow: staged('data.arrow'),
    csv: staged('data.csv'),
    escapeFormulas: spec.format.escapeFormulas === true,
    sensitive: sensitiveContexts(spec, table),
    claims: {
      ...(claims as GeneralizationClaimsOfMethod),
      privacy: spec.privacy,
      suppressed: method.suppressed,
    },
  });
}

function mondrian({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const { numeric, generalized, ...rest } = claims as MondrianClaimsOfMethod;
  return verifyMondrian({
    input: table,
    attributes: spec.attributes,
    privacy: spec.privacy,
    numeric,
    hierarchyRows: rowsOf(spec, table, (a) => a.type === 'sensitive' || generalized.includes(a.name)),
    arrow: readArrow(staged('data.arrow')),
    csv: readCsv(staged('data.csv'), { delimiter: table.delimiter }),
    escapeFormulas: spec.format.escapeFormulas === true,
    claims: rest,
  });
}

function anatomy({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const c = claims as AnatomyClaimsOfMethod;
  const pair = stagedPair(table, staged);
  return verifyAnatomy({
    input: table,
    attributes: spec.attributes,
    sensitive: c.sensitive,
    model: c.model,
    l: c.l,
    qit: pair('qit'),
    st: pair('st'),
    data: pair('data'),
    escapeFormulas: spec.format.escapeFormulas === true,
    claims: { buckets: c.buckets, bucketOfRow: Int32Array.from(c.bucketOfRow) } satisfies AnatomyClaims,
  });
}

function slicing({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  const c = claims as SlicingClaimsOfMethod;
  return verifySlicing({
    input: table,
    attributes: spec.attributes,
    sensitive: c.sensitive,
    l: c.l,
    data: stagedPair(table, staged)('data'),
    escapeFormulas: spec.format.escapeFormulas === true,
    claims: {
      buckets: c.buckets,
      bucketOfRow: Int32Array.from(c.bucketOfRow),
      columns: c.columns,
    } satisfies SlicingClaims,
  });
}

function randomization({ spec, table, claims, staged }: VerifyInput): VerificationCheck[] {
  return verifyRandomization({
    spec,
    input: table,
    dataArrow: staged('data.arrow'),
    dataCsv: staged('data.csv'),
    matrices: staged('matrices.json'),
    claims: claims as RandomizationClaims,
  });
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
      column.dictionary.forEach((value, code) => {
        if (rows[code]! > 0) share.set(value, (share.get(value) ?? 0) + rows[code]! / table.rowCount);
      });
      const hierarchy = spec.attributes.find((a) => a.name === name)!.hierarchy;
      return [
        name,
        { table: share, hierarchy: hierarchy ? verifierHierarchyRows(column, hierarchy) : undefined },
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
    partitions: number,
  ): ShardExpectation {
    const columns = shard.columns.map((c, i) => ({ ...c, dictionary: values.columns[i]!.dictionary }));
    return expectShard({
      shard: { ...shard, columns },
      attributes: spec.attributes,
      hierarchyRows: rowsOf(spec, values, (a) => a.type === 'quasi-identifying'),
      node: (claims as GeneralizationClaimsOfMethod).node,
      sensitive: modelAttributes(spec),
      partitions,
    });
  },

  summarizePart(
    spec: ReleaseSpec,
    delimiter: string,
    files: { arrow: string; csv: string },
    partitions: number,
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

  /** The reduce: `add` each partition of every slice, then `finish`. */
  checker(
    spec: ReleaseSpec,
    values: EncodedTable,
    claims: unknown,
    shards: readonly ShardFacts[],
    parts: readonly PartFacts[],
  ): PiecesCheck {
    const method = spec.method as Extract<ReleaseSpec['method'], { name: 'generalization' }>;
    const rows = shards.reduce((n, s) => n + s.rows, 0);
    const sensitive = new Map(
      modelAttributes(spec).map((name) => {
        const share = new Map<string, number>();
        for (const s of shards)
          for (const [v, n] of Object.entries(s.sensitive[name] ?? {})) share.set(v, (share.get(v) ?? 0) + n);
        for (const [v, n] of share) share.set(v, n / rows);
        const hierarchy = spec.attributes.find((a) => a.name === name)!.hierarchy;
        const column = values.columns.find((c) => c.name === name)!;
        return [
          name,
          { table: share, hierarchy: hierarchy ? verifierHierarchyRows(column, hierarchy) : undefined },
        ] as const;
      }),
    );
    return new PiecesCheck({
      names: releasedNames(values, spec.attributes),
      attributes: spec.attributes,
      shards,
      parts,
      sensitive,
      claims: {
        ...(claims as GeneralizationClaimsOfMethod),
        privacy: spec.privacy,
        suppressed: method.suppressed,
      },
    });
  },
};

/** The attributes the spec's models name. */
function modelAttributes(spec: ReleaseSpec): string[] {
  return [...new Set(spec.privacy.flatMap((m) => ('attribute' in m ? [m.attribute] : [])))];
}
