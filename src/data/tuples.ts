/**
 * Rows collapsed to their distinct tuples over some columns, with each tuple's count and each
 * row's tuple: the search's bottom classes, and the sample classes the risk measures count.
 */
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import type { EncodedColumn } from './table.ts';

/** Distinct QI tuples with their counts, and each row's tuple. */
export interface TupleSet {
  readonly columns: Int32Array[];
  readonly counts: Int32Array;
  readonly rowToTuple: Int32Array;
}

export function collapseRows(kernel: GroupingKernel, columns: readonly EncodedColumn[]): TupleSet {
  const session = kernel.open(
    { columns: columns.map((c) => c.codes), domains: columns.map((c) => c.dictionary.length) },
    columns.map(() => []),
  );
  const { groups, groupOf, sizes } = session.group(null);
  const tuples = session.keys(groups);
  session.dispose();
  return { columns: tuples, counts: sizes, rowToTuple: groupOf };
}
