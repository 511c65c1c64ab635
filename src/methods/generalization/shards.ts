/**
 * Generalization over row shards (the serverless fan-out): shards are collapsed apart, their
 * tuples merged in shard order (in order of first appearance in the input, exactly as one
 * collapse over every row gives them), the search runs once, and shards are applied apart
 * with the search's suppression flags. test/e2e/serverless-shards.test.ts checks that one
 * shard and several release the same bytes.
 */
import type { EncodedTable } from '../../data/table.ts';
import { buildHierarchy } from '../../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../../kernels/groupby/kernel.ts';
import type { ReleaseSpec } from '../../spec/spec.ts';
import type { ShardSteps, ShardTuples } from '../method.ts';
import { applyGeneralization } from './apply.ts';
import {
  collapseColumnNames,
  collapseRows,
  generalizationSpec,
  prepareGeneralization,
  searchStep,
} from './index.ts';

type Counts = Pick<ShardTuples, 'columns' | 'counts'>;

export const generalizationShards: ShardSteps = {
  count(spec, shard, kernel) {
    // The hierarchies take every value of the shard, or the error names its rows in the input:
    // the search sees distinct tuples only.
    for (const a of spec.attributes) {
      if (!a.hierarchy || (a.type !== 'quasi-identifying' && a.type !== 'sensitive')) continue;
      buildHierarchy(
        shard.columns.find((c) => c.name === a.name)!,
        a.hierarchy,
        a.type === 'quasi-identifying',
      );
    }
    const columns = collapseColumnNames(spec).map((n) => shard.columns.find((c) => c.name === n)!);
    return collapseRows(kernel, columns);
  },

  search(ctx, parts) {
    const { spec, kernel, time, say } = ctx;
    const names = collapseColumnNames(spec);
    const { merged, groupOf } = mergeTuples(parts, names, ctx.table, kernel);
    // The merged tuples stand in for the rows: each column's codes are the tuples'.
    const table: EncodedTable = {
      ...ctx.table,
      rowCount: merged.counts.reduce((n, c) => n + c, 0),
      columns: names.map((name, i) => ({
        name,
        dictionary: ctx.table.columns.find((c) => c.name === name)!.dictionary,
        codes: merged.columns[i]!,
      })),
    };
    const prepared = prepareGeneralization(spec, table, kernel, time, merged);
    const step = searchStep(prepared, kernel, time, say);
    // Each shard's flags: its own tuples → merged tuple → suppressed.
    let at = 0;
    const flags = parts.map((p) => {
      const own = new Uint8Array(p.counts.length);
      for (let t = 0; t < own.length; t++) own[t] = step.tupleSuppressed[groupOf[at + t]!]!;
      at += p.counts.length;
      return own;
    });
    return { node: step.node, claims: step.claims, report: step.report, flags };
  },

  apply(spec: ReleaseSpec, shard: EncodedTable, node, suppressedRow) {
    const hierarchies = new Map(
      spec.attributes
        .filter((a) => a.type === 'quasi-identifying')
        .map((a) => [
          a.name,
          buildHierarchy(shard.columns.find((c) => c.name === a.name)!, a.hierarchy!, true),
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
 * The shards' distinct tuples merged in shard order. `groupOf` maps each shard's tuples,
 * concatenated, to the merged ones. One shard's tuples are already that.
 */
function mergeTuples(
  parts: readonly Counts[],
  names: readonly string[],
  table: EncodedTable,
  kernel: GroupingKernel,
): { merged: ShardTuples; groupOf: Int32Array } {
  if (parts.length === 1) {
    const [only] = parts as [Counts];
    return {
      merged: { columns: only.columns, counts: only.counts, rowToTuple: new Int32Array(0) },
      groupOf: Int32Array.from({ length: only.counts.length }, (_, t) => t),
    };
  }
  const total = parts.reduce((n, p) => n + p.counts.length, 0);
  const concat = (pick: (p: Counts) => Int32Array) => {
    const out = new Int32Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(pick(p), at);
      at += p.counts.length;
    }
    return out;
  };
  const columns = names.map((_, c) => concat((p) => p.columns[c]!));
  const counts = concat((p) => p.counts);
  const domains = names.map((n) => table.columns.find((c) => c.name === n)!.dictionary.length);
  const session = kernel.open(
    { columns, counts, domains },
    names.map(() => []),
  );
  const { groups, groupOf, sizes } = session.group(null);
  const merged = { columns: session.keys(groups), counts: sizes, rowToTuple: new Int32Array(0) };
  session.dispose();
  return { merged, groupOf };
}
