/**
 * Generalization over row shards (the serverless fan-out): shards are collapsed apart, their
 * tuples merged in shard order (in order of first appearance in the input, exactly as one
 * collapse over every row gives them), the search runs once, and shards are applied apart
 * with the search's suppression flags. test/e2e/serverless-shards.test.ts checks that one
 * shard and several release the same bytes. Under (ε, δ)-differential privacy the shards hold
 * the secret sample each piece's scan drew, and the search is the sample's (`dpStep`).
 */
import { basename } from 'node:path';
import { inputRows } from '../../data/checks.ts';
import type { EncodedTable } from '../../data/table.ts';
import { collapseRows } from '../../data/tuples.ts';
import { SpecError } from '../../errors.ts';
import { buildHierarchy } from '../../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../../kernels/groupby/kernel.ts';
import { SecretDraws } from '../../models/differential-privacy.ts';
import { entityOf, isPassThroughType, type ReleaseSpec } from '../../release-spec/spec.ts';
import { keepingInstances } from '../../wasm/module.ts';
import type { MethodContext, ShardCounts, ShardSteps, ShardTuples } from '../method.ts';
import { applyGeneralization } from './apply.ts';
import {
  collapseColumnNames,
  dpPlan,
  dpStep,
  entityOverShards,
  generalizationSpec,
  prepareGeneralization,
  searchRandom,
  searchStepAsync,
} from './index.ts';
import { ConcatMerge, TupleMerge } from './merge.ts';

export const generalizationShards: ShardSteps = {
  count(spec, shard, kernel) {
    // A person's rows may lie in several shards: their tuples cannot count distinct persons.
    if (entityOf(spec) !== undefined) throw entityOverShards(spec);
    // The hierarchies take every value of the shard, or the error names its rows in the input:
    // the search sees distinct tuples only.
    for (const a of spec.attributes) {
      if (!a.hierarchy || (a.type !== 'quasi-identifying' && a.type !== 'sensitive')) continue;
      buildHierarchy(shard.columns.find((c) => c.name === a.name)!, a.hierarchy, inputRows(spec, shard));
    }
    const columns = collapseColumnNames(spec).map((n) => shard.columns.find((c) => c.name === n)!);
    return collapseRows(kernel, columns);
  },

  async search(ctx, counts) {
    const { spec, kernel, time, say } = ctx;
    // The shards hold a secret sample (each piece's scan drew its own rows): the counts are the sample's.
    const dp = dpPlan(spec);
    if (dp && counts.inputRows === undefined)
      throw new RangeError(
        'a differentially private search over shards needs the input rows the sample was drawn from',
      );
    if (generalizationSpec(spec).suppression === 'cells') {
      throw new SpecError(
        'E_SPEC_CONFLICT',
        `${basename(spec.file)}: method.suppression "cells" is released as one task, not over shards`,
        'release with --workers 1 on one machine, or use "suppression": "rows"',
      );
    }
    const names = collapseColumnNames(spec);
    const dictionaries = names.map((name) => ctx.table.columns.find((c) => c.name === name)!.dictionary);
    // The merge's grouping instance (ConcatMerge's), handed back, serves the search's session:
    // paged in once.
    const { step, groupOf } = await keepingInstances(async () => {
      const { merged, groupOf } = await mergeShards(
        counts,
        dictionaries.map((d) => d.length),
        time,
        kernel,
      );
      // The merged tuples stand in for the rows: each column's codes are the tuples'.
      const table: EncodedTable = {
        ...ctx.table,
        rowCount: merged.counts.reduce((n, c) => n + c, 0),
        columns: names.map((name, i) => ({ name, dictionary: dictionaries[i]!, codes: merged.columns[i]! })),
      };
      const prepared = prepareGeneralization(spec, table, kernel, time, merged);
      // Yielding between slices of a best-effort search: a signal stops the run within one.
      // A private search draws from a secret generator of its own, never from the spec's seed.
      const step = dp
        ? dpStep(prepared, kernel, time, say, dp, counts.inputRows!, new SecretDraws())
        : await searchStepAsync(prepared, kernel, time, say, searchRandom(spec));
      return { step, groupOf };
    });
    // Each shard's flags: its own tuples → merged tuple → suppressed (one shard's are the merged ones).
    const flags = time('flags', () =>
      groupOf
        ? groupOf.map((own) => {
            const out = new Uint8Array(own.length);
            for (let t = 0; t < own.length; t++) out[t] = step.tupleSuppressed[own[t]!]!;
            return out;
          })
        : [step.tupleSuppressed],
    );
    return { node: step.node, claims: step.claims, report: step.report, flags };
  },

  passThrough(spec) {
    return spec.attributes.filter((a) => isPassThroughType(a.type)).map((a) => a.name);
  },

  apply(spec: ReleaseSpec, shard: EncodedTable, node, suppressedRow) {
    const hierarchies = new Map(
      spec.attributes
        .filter((a) => a.type === 'quasi-identifying')
        .map((a) => [
          a.name,
          buildHierarchy(shard.columns.find((c) => c.name === a.name)!, a.hierarchy!, inputRows(spec, shard)),
        ]),
    );
    return applyGeneralization({
      table: shard,
      attributes: spec.attributes,
      hierarchies,
      node,
      suppressedRow,
      suppressed: generalizationSpec(spec).suppressed,
    });
  },
};

/**
 * The shards' distinct tuples merged in shard order, read one at a time (the next one read while
 * this one merges) and let go once merged, or once copied into ConcatMerge's concatenation.
 * `groupOf` maps each shard's tuples to the merged ones (none for one shard: its tuples are
 * already that).
 */
async function mergeShards(
  counts: ShardCounts,
  domains: readonly number[],
  time: MethodContext['time'],
  kernel: GroupingKernel,
): Promise<{ merged: ShardTuples; groupOf?: Int32Array[] }> {
  const rowToTuple = new Int32Array(0);
  if (counts.shards === 1) return { merged: { ...(await counts.read(0)), rowToTuple } };
  let merge: ShardMerge | undefined;
  // A read in flight when a merge fails is never awaited: its failure is of no interest then.
  const read = (s: number) => {
    const p = counts.read(s);
    p.catch(() => {});
    return p;
  };
  let next = read(0);
  for (let s = 0; s < counts.shards; s++) {
    const part = await next;
    if (s + 1 < counts.shards) next = read(s + 1);
    // A first shard of nearly distinct tuples (exact dates, postcodes): the others are likely
    // as distinct, their concatenation about the merged tuples' size, grouped in the kernel when
    // one instance holds it (in parts, TupleMerge's table is the smaller: it then makes room for
    // them all at once instead of rehashing shard by shard).
    if (!merge) {
      const expected = part.counts.length * counts.shards;
      const distinct = part.counts.length >= 0.9 * part.counts.reduce((a, b) => a + b, 0);
      merge = time('merge', () =>
        distinct && kernel.holdsInOne?.(expected, domains.length)
          ? new ConcatMerge(domains, expected, kernel)
          : tupleMerge(domains, distinct ? expected : 0),
      );
    }
    const into: ShardMerge = merge;
    time('merge', () => into.add(part));
  }
  const done = merge!;
  const { merged, groupOf } = time('merge', () => done.done());
  return { merged: { ...merged, rowToTuple }, groupOf };
}

/** A merge of the shards' tuples, added in shard order. */
interface ShardMerge {
  add(part: Pick<ShardTuples, 'columns' | 'counts'>): void;
  done(): { merged: Pick<ShardTuples, 'columns' | 'counts'>; groupOf: Int32Array[] };
}

/** TupleMerge as a ShardMerge, with room for `expected` tuples: each shard's merged ids kept as it is added. */
function tupleMerge(domains: readonly number[], expected: number): ShardMerge {
  const merge = new TupleMerge(domains);
  if (expected > 0) merge.reserve(expected);
  const groupOf: Int32Array[] = [];
  return {
    add: (part) => {
      groupOf.push(merge.add(part));
    },
    done: () => ({ merged: merge.done(), groupOf }),
  };
}
