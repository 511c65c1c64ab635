/**
 * What an analyst recovers from a Mondrian release (docs/definitions.md §6, "uniform spread within ECs"):
 * within a class E, each QI is spread uniformly and independently over the input values its
 * released value covers (the values under a hierarchy label; the values in a range), and the
 * attributes outside the QIs keep their joint distribution in E, so a cell t of a marginal
 * gets
 *   π̂(t) = (1/N) · Σ_E count_E(t's non-QI values) · Π_{QIs a} [t_a ∈ cover(E,a)] / |cover(E,a)|.
 *
 * A marginal over QIs Q groups the classes by their released values on Q (few groups for a
 * small Q); each cell then walks a trie of the groups through the categorical labels that
 * cover its values (a handful per value) and checks numeric ranges at the leaves, so a cell
 * costs about the number of groups it could fall in, and the CUBE stays affordable.
 */
import type { EncodedColumn } from '../../data/table.ts';
import type { Estimator } from '../../metrics/contingency.ts';
import type { PartitionProblem } from './partition.ts';
import type { Released } from './release.ts';

interface TrieNode {
  readonly children: Map<number, TrieNode>;
  readonly groups: number[];
  /** At a leaf, built when first walked: the groups whose first numeric range holds a value. */
  byValue?: Map<number, number[]>;
}

interface OtherPart {
  /** Packed non-QI values → id. */
  readonly index: Map<number, number>;
  /** (class, id, rows) triples. */
  readonly entries: Int32Array;
}

function otherPart(cols: readonly EncodedColumn[], classOf: Int32Array, classes: number): OtherPart {
  const index = new Map<number, number>();
  const counts = new Map<number, number>();
  for (let r = 0; r < classOf.length; r++) {
    let key = 0;
    for (const col of cols) key = key * col.dictionary.length + col.codes[r]!;
    let id = index.get(key);
    if (id === undefined) index.set(key, (id = index.size));
    const at = id * classes + classOf[r]!;
    counts.set(at, (counts.get(at) ?? 0) + 1);
  }
  const entries = new Int32Array(3 * counts.size);
  let x = 0;
  for (const [at, count] of counts) {
    entries[x++] = at % classes;
    entries[x++] = Math.floor(at / classes);
    entries[x++] = count;
  }
  return { index, entries };
}

/** The released attributes as input columns, and the estimator over their input codes. */
export function mondrianEstimator(
  columns: readonly EncodedColumn[],
  problem: PartitionProblem,
  released: Released,
): Estimator {
  const n = problem.rows;
  const classes = released.classes;
  const dimOf = columns.map((c) => problem.dims.findIndex((d) => d.name === c.name));
  // Per QI attribute: each class's released label, and per label the input codes it covers.
  const classLabel: (Int32Array | null)[] = [];
  const covers: (Uint8Array[] | null)[] = [];
  const coverList: (Int32Array[] | null)[] = [];
  const coverSize: (Float64Array | null)[] = [];
  columns.forEach((col, a) => {
    const i = dimOf[a]!;
    if (i < 0) {
      classLabel.push(null);
      covers.push(null);
      coverList.push(null);
      coverSize.push(null);
      return;
    }
    const dim = problem.dims[i]!;
    const labels = released.labelOf[i]!;
    const perClass = new Int32Array(classes);
    for (let r = 0; r < n; r++) perClass[released.classOf[r]!] = labels[released.partitionOf[r]!]!;
    // Input code → key, from the rows (keys are what the partitioning saw).
    const keyOfCode = new Int32Array(col.dictionary.length).fill(-1);
    for (let r = 0; r < n; r++) keyOfCode[col.codes[r]!] = dim.keys[r]!;
    const labelCount = released.dictionaries[i]!.length;
    const sets = Array.from({ length: labelCount }, () => new Uint8Array(col.dictionary.length));
    const sizes = new Float64Array(labelCount);
    // One partition per label is enough to know what the label covers.
    const seen = new Uint8Array(labelCount);
    const m = problem.dims.length;
    for (let p = 0; p < released.labelOf[i]!.length; p++) {
      const label = labels[p]!;
      if (seen[label]) continue;
      seen[label] = 1;
      const at = p * 3 * m + 3 * i;
      const ext = released.extent;
      for (let code = 0; code < col.dictionary.length; code++) {
        const key = keyOfCode[code]!;
        if (key < 0) continue;
        let inside: boolean;
        // A numeric part holding the missing value and numbers is released as `*`: it covers all.
        if (dim.kind === 'numeric') {
          const all = ext[at + 1]! >= dim.values!.length && ext[at]! < dim.values!.length;
          inside = all || (key >= ext[at]! && key <= ext[at + 1]!);
        } else {
          const level = ext[at + 2]!;
          inside = dim.levels![level]![key] === dim.levels![level]![ext[at]!];
        }
        if (inside) {
          sets[label]![code] = 1;
          sizes[label]!++;
        }
      }
    }
    classLabel.push(perClass);
    covers.push(sets);
    coverList.push(sets.map((set) => Int32Array.from(set.keys()).filter((code) => set[code] === 1)));
    coverSize.push(sizes);
  });
  const classOf = released.classOf;
  const otherParts = new Map<string, OtherPart>();
  const numericAttr = dimOf.map((i) => i >= 0 && problem.dims[i]!.kind === 'numeric');
  // Categorical QIs: per input code, the released labels covering it.
  const labelsAbove = columns.map((col, a) => {
    const sets = covers[a];
    if (!sets || numericAttr[a]) return null;
    return Array.from({ length: col.dictionary.length }, (_, code) =>
      Int32Array.from(sets.map((_, l) => l).filter((l) => sets[l]![code] === 1)),
    );
  });

  return {
    marginal(attrs, cells) {
      const cellCount = cells[0]?.length ?? 1;
      const out = new Float64Array(cellCount);
      if (n === 0) return out;
      const qi = attrs.map((_, j) => j).filter((j) => classLabel[attrs[j]!] !== null);
      const other = attrs.map((_, j) => j).filter((j) => classLabel[attrs[j]!] === null);

      // Non-QI values: one id per distinct combination (cached per set of attributes), and
      // each class's rows per id.
      const otherCols = other.map((j) => columns[attrs[j]!]!);
      const cacheKey = other.map((j) => attrs[j]!).join(',');
      let part = otherParts.get(cacheKey);
      if (!part) otherParts.set(cacheKey, (part = otherPart(otherCols, classOf, classes)));
      const { index: otherIndex, entries } = part;
      const cellOther = new Int32Array(cellCount);
      if (other.length > 0) {
        for (let c = 0; c < cellCount; c++) {
          let key = 0;
          other.forEach((j, x) => {
            key = key * otherCols[x]!.dictionary.length + cells[j]![c]!;
          });
          cellOther[c] = otherIndex.get(key) ?? -1;
        }
      }
      const others = Math.max(1, otherIndex.size);

      // Classes grouped by their released values on the marginal's QIs.
      let groupOfClass = new Int32Array(classes);
      let groups = 1;
      for (const j of qi) {
        const labels = classLabel[attrs[j]!]!;
        const width = coverSize[attrs[j]!]!.length;
        const index = new Map<number, number>();
        const next = new Int32Array(classes);
        for (let e = 0; e < classes; e++) {
          const key = groupOfClass[e]! * width + labels[e]!;
          let g = index.get(key);
          if (g === undefined) index.set(key, (g = index.size));
          next[e] = g;
        }
        groupOfClass = next;
        groups = index.size;
      }
      const groupLabels = qi.map(() => new Int32Array(groups));
      for (let e = 0; e < classes; e++) {
        qi.forEach((j, x) => {
          groupLabels[x]![groupOfClass[e]!] = classLabel[attrs[j]!]![e]!;
        });
      }
      // Rows per (group, non-QI values).
      const mass = new Map<number, number>();
      for (let x = 0; x < entries.length; x += 3) {
        const key = groupOfClass[entries[x]!]! * others + entries[x + 1]!;
        mass.set(key, (mass.get(key) ?? 0) + entries[x + 2]!);
      }

      if (qi.length === 0) {
        for (const [key, count] of mass) {
          const o = key % others;
          for (let c = 0; c < cellCount; c++) if (cellOther[c] === o) out[c]! += count / n;
        }
        return out;
      }
      // Groups in a trie keyed by their categorical labels; a cell walks it through the labels
      // covering its values (a handful per value) and checks the numeric ranges at the leaves.
      const catX = qi.map((_, x) => x).filter((x) => !numericAttr[attrs[qi[x]!]!]);
      const numX = qi.map((_, x) => x).filter((x) => numericAttr[attrs[qi[x]!]!]);
      const factor = new Float64Array(groups).fill(1 / n);
      const root: TrieNode = { children: new Map(), groups: [] };
      for (let g = 0; g < groups; g++) {
        qi.forEach((j, x) => {
          factor[g]! /= coverSize[attrs[j]!]![groupLabels[x]![g]!]!;
        });
        let node = root;
        for (const x of catX) {
          const label = groupLabels[x]![g]!;
          let next = node.children.get(label);
          if (!next) node.children.set(label, (next = { children: new Map(), groups: [] }));
          node = next;
        }
        node.groups.push(g);
      }
      const catAbove = catX.map((x) => labelsAbove[attrs[qi[x]!]!]!);
      const catCells = catX.map((x) => cells[qi[x]!]!);
      const numCovers = numX.map((x) => covers[attrs[qi[x]!]!]!);
      const numLists = numX.map((x) => coverList[attrs[qi[x]!]!]!);
      const numLabels = numX.map((x) => groupLabels[x]!);
      const numCells = numX.map((x) => cells[qi[x]!]!);
      let cell = 0;
      let o = 0;
      let sum = 0;
      const walk = (node: TrieNode, depth: number): void => {
        if (depth === catX.length) {
          let candidates = node.groups;
          if (numX.length > 0) {
            if (!node.byValue) {
              const byValue = new Map<number, number[]>();
              for (const g of node.groups) {
                for (const v of numLists[0]![numLabels[0]![g]!]!) {
                  let list = byValue.get(v);
                  if (!list) byValue.set(v, (list = []));
                  list.push(g);
                }
              }
              node.byValue = byValue;
            }
            candidates = node.byValue.get(numCells[0]![cell]!) ?? [];
          }
          for (const g of candidates) {
            let inside = true;
            for (let y = 1; y < numX.length && inside; y++) {
              inside = numCovers[y]![numLabels[y]![g]!]![numCells[y]![cell]!] === 1;
            }
            if (!inside) continue;
            const count = mass.get(g * others + o);
            if (count !== undefined) sum += count * factor[g]!;
          }
          return;
        }
        for (const label of catAbove[depth]![catCells[depth]![cell]!]!) {
          const next = node.children.get(label);
          if (next) walk(next, depth + 1);
        }
      };
      for (cell = 0; cell < cellCount; cell++) {
        o = cellOther[cell]!;
        if (o < 0) continue;
        sum = 0;
        walk(root, 0);
        out[cell] = sum;
      }
      return out;
    },
  };
}
