/**
 * Evaluating one lattice node: group the distinct tuples under the node's levels (WASM or TS
 * kernel), judge every class against the privacy models, suppress the failing classes, and
 * measure utility. The one operation the search counts as a "check".
 *
 * Nodes are grouped from the classes of an evaluated specialization where one is at hand (a
 * rollup: classes only merge as levels rise), which costs O(classes) instead of O(tuples);
 * the tuple → class map is composed only when something needs it (SA histograms, the entropy
 * metric's suppression cost, the release itself).
 */
import { K_ANONYMITY } from '../../catalogue/k-anonymity.ts';
import type { Grouping, GroupingSession } from '../../kernels/groupby/kernel.ts';
import { type SparseClassHistograms, sparseClassHistograms } from '../../metrics/disclosure.ts';
import type { ClassOutcome, GeneralizationMetrics, MetricValues } from '../../metrics/generalization.ts';
import { smallestPassingClass } from '../../models/index.ts';
import type { ClassCounts, PrivacyModel, SaCounts } from '../../models/model.ts';
import type { MetricName } from '../../release-spec/spec.ts';
import type { Lattice } from './lattice.ts';
import type { PopulationTuples } from './population.ts';

/** A sensitive attribute's values per distinct tuple (codes in [0, width)). */
export interface SensitiveColumn {
  readonly attribute: string;
  readonly values: Int32Array;
  readonly width: number;
  /** p(T, s) over the input. */
  readonly distribution: Float64Array;
}

/** Everything the search needs, over distinct tuples rather than rows. */
export interface GeneralizationProblem {
  readonly lattice: Lattice;
  readonly rows: number;
  readonly counts: Int32Array;
  readonly models: readonly PrivacyModel[];
  readonly sensitive: readonly SensitiveColumn[];
  readonly maxSuppressedRows: number;
  readonly metric: MetricName;
  readonly metrics: GeneralizationMetrics;
  /** The population table, when a model counts its records per class (k-map, δ-presence). */
  readonly population?: PopulationTuples | undefined;
  /**
   * With an entity column: classes are judged by their distinct persons, and the suppression
   * limit counts persons with a suppressed row (`maxSuppressedRows` is then every row).
   */
  readonly entity?: EntityProblem | undefined;
}

/** Persons over the distinct tuples (docs/definitions.md, "Several rows per person"). */
export interface EntityProblem {
  /** Per distinct tuple: its person's code, in [0, codes). */
  readonly of: Int32Array;
  /** The entity column's dictionary size (a dictionary may hold values no row has). */
  readonly codes: number;
  /** Distinct persons in the input: the codes some row has. */
  readonly persons: number;
  /** method.maxSuppression as a number of persons. */
  readonly maxSuppressedPersons: number;
}

/**
 * Per-class counts of one sensitive attribute: `counts[g * width + s]`; with an entity column
 * person-weighted (each person of a class weighs 1 over their rows' values there). Sparse (each
 * class's values held, `sparseClassHistograms`) where classes × values would outgrow the tuples.
 */
export interface ClassHistograms {
  readonly attribute: string;
  readonly width: number;
  readonly counts: NodeCounts;
}

/** A node's per-class counts of one sensitive attribute: dense (classes × values) or sparse. */
export type NodeCounts = SaCounts | SparseClassHistograms;

/** Cells (Int32) a node's counts hold. */
function cellsOf(counts: NodeCounts): number {
  return 'offsets' in counts ? counts.offsets.length + 2 * counts.values.length : counts.length;
}

/** Class g's counts in a node's histograms (a view of them). */
export function countsOfClass(h: ClassHistograms, g: number): ClassCounts {
  const c = h.counts;
  if ('offsets' in c)
    return { codes: c.values, counts: c.counts, from: c.offsets[g]!, to: c.offsets[g + 1]! };
  return c.subarray(g * h.width, (g + 1) * h.width);
}

/**
 * The outcome of one node. For an infeasible node the class loop stops once the suppression
 * limit is passed: `suppressed`, `retainedClasses` and `minClassSize` are then partial, and
 * only `feasible`, `groups`, `groupOf`, `sizes` and `reps` may be relied on.
 */
export interface NodeResult extends ClassOutcome {
  readonly id: number;
  readonly histograms: ClassHistograms[];
  /** Per class: the population records it matches (when a model needs them and the node was judged). */
  readonly population?: Int32Array | undefined;
  readonly levels: number[];
  readonly feasible: boolean;
  /** Smallest retained class (0 when none is retained). */
  readonly minClassSize: number;
  /**
   * Σ|E|² over the suppressed classes (over those the class loop saw: for an infeasible node,
   * a lower bound). `retainedSquares` (in ClassOutcome) is the same over the retained ones.
   */
  readonly suppressedSquares: number;
  /**
   * Utility of the node; +∞ for infeasible nodes (never released, so never measured). The
   * spec's metric always; the others once `NodeEvaluator.complete` has run (NaN before).
   */
  readonly values: MetricValues;
  /** The spec's metric. */
  readonly value: number;
  /** With an entity column: per class, its distinct persons. */
  readonly persons?: Int32Array | undefined;
  /** With an entity column: the persons with a suppressed row (partial for an infeasible node). */
  readonly suppressedPersons?: number | undefined;
  /** With an entity column: the fewest persons in a retained class (0 when none is retained). */
  readonly minClassPersons?: number | undefined;
}

const INFEASIBLE_VALUES: MetricValues = Object.freeze({
  ncp: Number.POSITIVE_INFINITY,
  discernibility: Number.POSITIVE_INFINITY,
  precision: Number.POSITIVE_INFINITY,
  aecs: Number.POSITIVE_INFINITY,
  entropy: Number.POSITIVE_INFINITY,
  loss: Number.POSITIVE_INFINITY,
});

/** Int32 cells held by the kept snapshots: grows as their tuple → class maps are composed. */
interface Budget {
  cells: number;
}

/**
 * A node's classes; the tuple → class map is made on first use: composed from a lower node's
 * when the rollup kept its map, else grouped from the tuples (the same ids, see the kernel).
 */
class Classes implements Grouping {
  private own: Int32Array | undefined;
  /** The budget this snapshot counts in while it is kept. */
  budget: Budget | undefined;
  /** Per sensitive attribute (the problem's order): its per-class histogram, once counted. */
  readonly histograms: (Int32Array | SparseClassHistograms | undefined)[] = [];
  /** With an entity column: per class, its distinct persons, once counted. */
  persons: Int32Array | undefined;
  /** With an entity column, per sensitive attribute: its person-weighted per-class histogram, once counted. */
  readonly weighted: (Float64Array | undefined)[] = [];
  constructor(
    readonly levels: readonly number[],
    readonly groups: number,
    readonly sizes: Int32Array,
    readonly reps: Int32Array,
    /** The node this one was rolled up from, with the map of its classes to ours (if kept). */
    public source: Classes | undefined,
    public map: Int32Array | undefined,
    private session: GroupingSession | undefined,
    groupOf?: Int32Array,
  ) {
    this.own = groupOf;
  }

  get groupOf(): Int32Array {
    if (!this.own) {
      const before = this.cells;
      this.own = this.map
        ? this.session!.compose(this.source!.groupOf, this.map)
        : this.session!.group(this.levels).groupOf;
      this.source = undefined; // let the chain below go
      this.map = undefined;
      this.session = undefined;
      if (this.budget) this.budget.cells += this.cells - before;
    }
    return this.own;
  }

  /** Keeps a person-weighted histogram (counted in the budget, two Int32 cells a value). */
  keepWeighted(i: number, counts: Float64Array): void {
    this.weighted[i] = counts;
    if (this.budget) this.budget.cells += 2 * counts.length;
  }

  /** Keeps a histogram (counted in the budget). */
  keepHistogram(i: number, counts: Int32Array | SparseClassHistograms): void {
    this.histograms[i] = counts;
    if (this.budget) this.budget.cells += cellsOf(counts);
  }

  /** Lets the chain below go; the tuple → class map, if ever needed, is grouped afresh. */
  dropSource(): void {
    const before = this.cells;
    this.source = undefined;
    this.map = undefined;
    if (this.budget) this.budget.cells += this.cells - before;
  }

  /** Int32 cells held (for the snapshot budget). */
  get cells(): number {
    let cells =
      2 * this.groups + (this.own?.length ?? 0) + (this.map?.length ?? 0) + (this.persons?.length ?? 0);
    for (const h of this.histograms) cells += h ? cellsOf(h) : 0;
    for (const h of this.weighted) cells += 2 * (h?.length ?? 0);
    return cells;
  }
}

/**
 * A class histogram is summed from the source's (groups × width cells) rather than counted over
 * the tuples (a compose and a histogram pass, n each, and their copies) while the source has at
 * most this many cells per tuple (measured on Adult's t and δ searches: 1 beats 0.5 and 2–8).
 */
const HISTOGRAM_ROLLUP_CELLS_PER_TUPLE = 1;

/**
 * A node's class histograms are counted densely (classes × values cells: the WASM kernel, then
 * a copy of each class's row for the models) while they have at most this many cells per
 * distinct tuple and at most DENSE_HISTOGRAM_CELLS; else sparsely, each class's values held
 * (linear in the tuples): a near-unique table's bottom nodes have about as many classes as
 * rows, and an attribute of thousands of values would need gigabytes, most of them zero.
 */
const DENSE_CELLS_PER_TUPLE = 16;
/** 1 GiB of Int32 cells. */
const DENSE_HISTOGRAM_CELLS = 2 ** 28;
/** Every class of a node counted (the search judges them all). */
const EVERY_CLASS = () => true;

/**
 * Evaluated nodes kept as rollup sources, newest last, oldest dropped first: bounded in cells
 * (128 MiB) rather than in number, since a node regrouped from a far source costs far more.
 */
const SNAPSHOT_CELLS = 32 * 1024 * 1024;
const SNAPSHOT_COUNT = 4096;
/** At most this many "wide" attributes (more than WIDE_DOMAIN codes) stage rollups from the bottom. */
const WIDE_ATTRIBUTES = 2;
const WIDE_DOMAIN = 16;
/** Lattices up to this many nodes flag counted nodes in an array; larger ones in a set. */
const SEEN_FLAGS = 1 << 27;

export class NodeEvaluator {
  /** Distinct nodes checked so far (grouped, and judged by the models or by k alone). */
  checked = 0;
  /**
   * Set when one node alone is evaluated (a given node): no staging node is grouped for later
   * ones, the node is rolled up from the bottom's classes directly.
   */
  single = false;
  /**
   * Set when the tuples are the distinct quasi-identifier combinations themselves (they carry
   * no sensitive value or person): the bottom node's classes are the tuples, without grouping.
   */
  distinctTuples = false;
  /** Nodes counted: a flag per node, or a set on lattices too large for one. */
  private readonly seen: Uint8Array | Set<number>;
  /** Of those, grouped from an evaluated specialization's classes rather than the bottom node's. */
  rollups = 0;
  private readonly snapshots: Classes[] = [];
  private readonly byId = new Map<number, Classes>();
  private readonly budget: Budget = { cells: 0 };

  /** Int32 cells the kept rollup sources hold now. */
  get keptCells(): number {
    return this.budget.cells;
  }
  private bottom: Classes | undefined;
  /** The smallest class any model lets pass (k, l, or what t-closeness needs): smaller ones fail. */
  private readonly k: number;
  /** One class's histogram, reused: the models read it without a view per class. */
  private readonly scratch: SaCounts[];
  /** The models besides k-anonymity (which the class sizes decide), with their SA's index. */
  private readonly judges: { readonly model: PrivacyModel; readonly sa: number }[];
  /**
   * Whether rollups keep their source → class maps: only SA histograms and the entropy metric
   * read tuple → class maps during the search; without them the report's one node regroups.
   */
  private readonly keepMaps: boolean;
  /** The attributes with the most codes (rollups from the bottom go through them first). */
  private readonly wide: number[];
  /** The models judged on the release as a whole (average risk). */
  private readonly overall: PrivacyModel[];
  /** With an entity column: the tuples in order of their person, and where each person's start. */
  private readonly byPerson: { readonly tuples: Int32Array; readonly start: Int32Array } | undefined;

  constructor(
    readonly problem: GeneralizationProblem,
    private readonly session: GroupingSession,
    /** Int32 cells the kept rollup sources may hold (default 32 Mi: 128 MiB). */
    private readonly snapshotCells = SNAPSHOT_CELLS,
    /** Groups the population's tuples (`problem.population`), when a model counts them. */
    private readonly populationSession?: GroupingSession,
    /**
     * The most cells a node's class histograms are counted densely in, else sparsely (default:
     * DENSE_CELLS_PER_TUPLE per tuple, at most DENSE_HISTOGRAM_CELLS; the tests force either way).
     */
    private readonly denseHistogramCells?: number,
  ) {
    this.k = smallestPassingClass(problem.models);
    this.seen = problem.lattice.size <= SEEN_FLAGS ? new Uint8Array(problem.lattice.size) : new Set<number>();
    this.scratch = problem.sensitive.map((sa) =>
      problem.entity ? new Float64Array(sa.width) : new Int32Array(sa.width),
    );
    this.judges = problem.models
      .filter((model) => model.spec.model !== K_ANONYMITY.name)
      .map((model) => ({ model, sa: problem.sensitive.findIndex((s) => s.attribute === model.attribute) }));
    this.overall = problem.models.filter((m) => m.overall !== undefined);
    this.keepMaps = this.judges.length > 0 || problem.metric === 'entropy' || problem.entity !== undefined;
    this.byPerson = problem.entity && tuplesByPerson(problem.entity);
    const { domains } = session;
    this.wide = domains
      .map((_, i) => i)
      .filter((i) => problem.lattice.heights[i]! > 0 && domains[i]! > WIDE_DOMAIN)
      .sort((a, b) => domains[b]! - domains[a]! || a - b)
      .slice(0, WIDE_ATTRIBUTES);
  }

  private count(id: number): void {
    const seen = this.seen;
    if (seen instanceof Set) {
      if (!seen.has(id)) {
        seen.add(id);
        this.checked++;
      }
    } else if (!seen[id]) {
      seen[id] = 1;
      this.checked++;
    }
  }

  evaluate(id: number): NodeResult {
    const { problem } = this;
    this.count(id);
    const levels = problem.lattice.levels(id);
    const classes = this.classesAt(id, levels);
    const { groups, sizes } = classes;
    const k = this.k;
    const max = problem.maxSuppressedRows;
    // Classes below k first: past the limit, the node fails without its SA histograms (with no
    // model but k, the class loop below finds the same on its own).
    const judges = this.judges.length === 0 || rowsBelow(k, classes) > max ? [] : this.judges;
    const histograms: ClassHistograms[] =
      judges.length === 0
        ? []
        : problem.sensitive.map((sa, i) => ({
            attribute: sa.attribute,
            width: sa.width,
            counts: problem.entity ? this.weightedOf(classes, i) : this.histogramOf(classes, i),
          }));
    // Its histograms counted, the node needs its source no more (the entropy metric reads the
    // tuple → class map of every node: there, keep the way to compose it).
    // (Persons are counted over the tuple → class map: with an entity column, keep the way to it.)
    const persons = this.personsOf(classes);
    if (judges.length > 0 && problem.metric !== 'entropy' && !persons) classes.dropSource();
    const population = judges.length > 0 ? this.populationOf(classes) : undefined;
    const summary = { size: 0, histogram: null as ClassCounts | null, population: 0 };
    // A sparse class's counts, read in place (no view per class).
    const entries: { codes: Int32Array; counts: SaCounts; from: number; to: number } = {
      codes: new Int32Array(0),
      counts: new Int32Array(0),
      from: 0,
      to: 0,
    };
    const suppressed = new Uint8Array(groups);
    let suppressedRows = 0;
    let retainedClasses = 0;
    let minClassSize = 0;
    let retainedSquares = 0;
    let suppressedSquares = 0;
    for (let g = 0; g < groups; g++) {
      const size = sizes[g]!;
      // A class's size as the models read it: its rows, or with an entity column its persons.
      const counted = persons ? persons[g]! : size;
      let holds = counted >= k;
      for (let j = 0; holds && j < judges.length; j++) {
        const { model, sa } = judges[j]!;
        if (sa >= 0) {
          const h = histograms[sa]!.counts;
          if ('offsets' in h) {
            entries.codes = h.values;
            entries.counts = h.counts;
            entries.from = h.offsets[g]!;
            entries.to = h.offsets[g + 1]!;
            summary.histogram = entries;
          } else {
            const scratch = this.scratch[sa]!;
            const w = histograms[sa]!.width;
            for (let s = 0, at = g * w; s < w; s++, at++) scratch[s] = h[at]!;
            summary.histogram = scratch;
          }
        } else summary.histogram = null;
        summary.size = counted;
        if (population) summary.population = population[g]!;
        holds = model.holds(summary);
      }
      if (holds) {
        retainedClasses++;
        retainedSquares += size * size;
        if (minClassSize === 0 || size < minClassSize) minClassSize = size;
      } else {
        suppressed[g] = 1;
        suppressedRows += size;
        suppressedSquares += size * size;
        // Past the limit the node is infeasible: its classes no longer matter.
        if (suppressedRows > max) break;
      }
    }
    let rows = problem.rows - suppressedRows;
    const overallHolds = () => this.overall.every((m) => m.overall!(retainedClasses, rows));
    if (suppressedRows <= max && !overallHolds()) {
      // Whole-release models: the smallest classes suppressed first until they hold.
      const order: number[] = [];
      for (let g = 0; g < groups; g++) if (!suppressed[g]) order.push(g);
      order.sort((a, b) => sizes[a]! - sizes[b]! || a - b);
      for (const g of order) {
        if (suppressedRows > max || overallHolds()) break;
        const size = sizes[g]!;
        suppressed[g] = 1;
        suppressedRows += size;
        suppressedSquares += size * size;
        retainedSquares -= size * size;
        retainedClasses--;
        rows -= size;
      }
      // (Every class suppressed, or past the limit: the node is infeasible either way.)
      minClassSize = 0;
      for (let g = 0; g < groups; g++)
        if (!suppressed[g] && (minClassSize === 0 || sizes[g]! < minClassSize)) minClassSize = sizes[g]!;
    }
    // Utility matters only where the node may be released: skip it for infeasible nodes.
    // A node that suppresses every row releases nothing (or only masked rows): never a solution.
    // With an entity column the limit counts the persons with a suppressed row (rows: any number).
    const suppressedPersons = persons && this.personsWith(classes, suppressed);
    const feasible =
      suppressedRows <= problem.maxSuppressedRows &&
      retainedClasses > 0 &&
      (suppressedPersons === undefined || suppressedPersons <= problem.entity!.maxSuppressedPersons);
    const outcome = outcomeOf(classes, suppressed, suppressedRows, retainedClasses, retainedSquares);
    const values = feasible ? problem.metrics.values(levels, outcome, problem.metric) : INFEASIBLE_VALUES;
    // Onto `outcome` rather than a spread of it, which would compose the tuple → class map.
    return Object.assign(outcome, {
      id,
      levels,
      histograms,
      population,
      feasible,
      minClassSize,
      suppressedSquares,
      values,
      value: values[problem.metric],
      ...(persons && {
        persons,
        suppressedPersons,
        minClassPersons: smallestRetained(persons, suppressed),
      }),
    });
  }

  /** With an entity column: per class of `classes`, its distinct persons (counted once, kept). */
  private personsOf(classes: Classes): Int32Array | undefined {
    const byPerson = this.byPerson;
    if (!byPerson) return undefined;
    if (classes.persons) return classes.persons;
    const { groupOf, groups } = classes;
    const { tuples, start } = byPerson;
    const persons = new Int32Array(groups);
    // The last person counted in each class: a person's tuples are consecutive in `tuples`.
    const last = new Int32Array(groups).fill(-1);
    for (let e = 0; e + 1 < start.length; e++) {
      for (let x = start[e]!; x < start[e + 1]!; x++) {
        const g = groupOf[tuples[x]!]!;
        if (last[g] !== e) {
          last[g] = e;
          persons[g]!++;
        }
      }
    }
    classes.persons = persons;
    if (classes.budget) classes.budget.cells += groups;
    return persons;
  }

  /** With an entity column: the persons with a row in a flagged class. */
  private personsWith(classes: Classes, flagged: Uint8Array): number {
    const { tuples, start } = this.byPerson!;
    const { groupOf } = classes;
    let n = 0;
    for (let e = 0; e + 1 < start.length; e++) {
      for (let x = start[e]!; x < start[e + 1]!; x++) {
        if (flagged[groupOf[tuples[x]!]!]) {
          n++;
          break;
        }
      }
    }
    return n;
  }

  /**
   * Whether the classes too small for any model (rows, or with an entity column persons, below
   * k) stay within the suppression limit at a node: if not, the node and every specialization
   * are infeasible, whatever the models say of the other classes (a class's rows and its persons
   * only grow as levels rise).
   */
  forcedWithinLimit(id: number): boolean {
    this.count(id);
    const classes = this.classesAt(id, this.problem.lattice.levels(id));
    return this.forced(classes, new Uint8Array(classes.groups)) !== undefined;
  }

  /**
   * Flags the classes below k (by persons with an entity column) and returns the rows they hold,
   * or undefined when they exceed the suppression limit.
   */
  private forced(classes: Classes, flags: Uint8Array): number | undefined {
    const persons = this.personsOf(classes);
    const rows = rowsBelow(this.k, classes, flags, persons);
    if (rows > this.problem.maxSuppressedRows) return undefined;
    if (persons && this.personsWith(classes, flags) > this.problem.entity!.maxSuppressedPersons)
      return undefined;
    return rows;
  }

  /**
   * Per-class counts of sensitive attribute i, dense or sparse (DENSE_CELLS_PER_TUPLE): summed
   * from the source node's histogram through the rollup's map (the source's is made the same
   * way, down to a node counted over the tuples) while that is the smaller work; else counted
   * over the tuples.
   */
  private histogramOf(classes: Classes, i: number): Int32Array | SparseClassHistograms {
    const known = classes.histograms[i];
    if (known) return known;
    const sa = this.problem.sensitive[i]!;
    const w = sa.width;
    const n = sa.values.length;
    const { source, map, groups } = classes;
    let counts: Int32Array | SparseClassHistograms;
    const dense = this.denseHistogramCells ?? Math.min(DENSE_CELLS_PER_TUPLE * n, DENSE_HISTOGRAM_CELLS);
    if (groups * w <= dense) {
      if (source && map && source.groups * w <= HISTOGRAM_ROLLUP_CELLS_PER_TUPLE * n) {
        const from = this.histogramOf(source, i);
        counts = new Int32Array(groups * w);
        if ('offsets' in from) {
          for (let g = 0; g < source.groups; g++) {
            const to = map[g]! * w;
            for (let x = from.offsets[g]!; x < from.offsets[g + 1]!; x++)
              counts[to + from.values[x]!]! += from.counts[x]!;
          }
        } else {
          for (let g = 0; g < source.groups; g++) {
            const to = map[g]! * w;
            const at = g * w;
            for (let s = 0; s < w; s++) counts[to + s]! += from[at + s]!;
          }
        }
      } else counts = this.session.histogram(classes.groupOf, groups, sa.values, w);
    } else {
      // A source with more classes is sparse too: its entries (at most the tuples) roll up.
      const from = source && map ? source.histograms[i] : undefined;
      if (from && map && 'offsets' in from) {
        const classOf = new Int32Array(from.values.length);
        for (let g = 0; g < from.groups; g++) classOf.fill(map[g]!, from.offsets[g]!, from.offsets[g + 1]!);
        counts = sparseClassHistograms(classOf, groups, w, from.values, EVERY_CLASS, from.counts);
      } else
        counts = sparseClassHistograms(
          classes.groupOf,
          groups,
          w,
          sa.values,
          EVERY_CLASS,
          this.problem.counts,
        );
    }
    classes.keepHistogram(i, counts);
    return counts;
  }

  /**
   * With an entity column: per-class person-weighted counts of sensitive attribute i
   * (docs/definitions.md, "Several rows per person"): each person of a class adds, for each of
   * their rows there, 1 / their rows in the class to the row's value. Counted over the tuples
   * (a person's weights in a merged class are not the sum of their weights in its parts).
   */
  private weightedOf(classes: Classes, i: number): Float64Array {
    const known = classes.weighted[i];
    if (known) return known;
    const sa = this.problem.sensitive[i]!;
    const w = sa.width;
    const { tuples, start } = this.byPerson!;
    const { groupOf, groups } = classes;
    const { counts } = this.problem;
    const values = sa.values;
    const weighted = new Float64Array(groups * w);
    // One person's rows per class (a scratch count, reset after each person).
    const rows = new Int32Array(groups);
    for (let e = 0; e + 1 < start.length; e++) {
      const from = start[e]!;
      const to = start[e + 1]!;
      for (let x = from; x < to; x++) {
        const t = tuples[x]!;
        rows[groupOf[t]!]! += counts[t]!;
      }
      for (let x = from; x < to; x++) {
        const t = tuples[x]!;
        const g = groupOf[t]!;
        weighted[g * w + values[t]!]! += counts[t]! / rows[g]!;
      }
      for (let x = from; x < to; x++) rows[groupOf[tuples[x]!]!] = 0;
    }
    classes.keepWeighted(i, weighted);
    return weighted;
  }

  /** Per class: the population records its generalized tuple matches (undefined without a population). */
  private populationOf(classes: Classes): Int32Array | undefined {
    const population = this.problem.population;
    if (!population || !this.populationSession) return undefined;
    const { groupOf, sizes } = this.populationSession.group(classes.levels);
    return Int32Array.from(
      classes.reps.subarray(0, classes.groups),
      (t) => sizes[groupOf[population.tupleOf[t]!]!]!,
    );
  }

  /** Ends the grouping sessions (their kernel instances may serve the next ones). */
  dispose(): void {
    this.session.dispose();
    this.populationSession?.dispose();
  }

  /**
   * The bottom node's classes (the input's distinct quasi-identifier combinations), grouped
   * but neither judged nor measured: all the report compares the release with.
   */
  inputClasses(): Pick<NodeResult, 'groups' | 'groupOf'> {
    return this.classesAt(0, this.problem.lattice.levels(0));
  }

  /** The node with every metric measured (for the report). */
  complete(r: NodeResult): NodeResult {
    if (!r.feasible) return r;
    const values = this.problem.metrics.values(r.levels, r, 'all');
    return { ...r, values }; // the spread composes the tuple → class map: the release needs it
  }

  /**
   * Rows in classes smaller than k (here: the smallest class any model lets pass) at a node,
   * from its grouping alone (no models): more than the suppression limit makes the node and
   * all its specializations infeasible, whatever the models say of the other classes.
   */
  rowsBelowK(id: number): number {
    this.count(id);
    const classes = this.classesAt(id, this.problem.lattice.levels(id));
    return rowsBelow(this.k, classes, undefined, this.personsOf(classes));
  }

  /** Whether models other than k judge classes (else a node's grouping decides it whole). */
  get judgesBeyondK(): boolean {
    return this.judges.length > 0;
  }

  /**
   * A lower bound on a node's metric from its grouping alone: the value with only the classes
   * smaller than k suppressed (the models can only suppress more, and a suppressed row costs at
   * least as much as a released one — not so for AECS, which gets only AECS ≥ 0). +∞ when
   * those rows already exceed the limit.
   */
  groupingBound(id: number): number {
    const { problem } = this;
    this.count(id);
    const levels = problem.lattice.levels(id);
    const classes = this.classesAt(id, levels);
    const suppressed = new Uint8Array(classes.groups);
    const suppressedRows = this.forced(classes, suppressed);
    if (suppressedRows === undefined) return Number.POSITIVE_INFINITY;
    if (problem.metric === 'aecs') return 0;
    let retained = 0;
    for (let g = 0; g < suppressed.length; g++) retained += 1 - suppressed[g]!;
    const outcome = outcomeOf(classes, suppressed, suppressedRows, retained);
    return problem.metrics.values(levels, outcome, problem.metric)[problem.metric];
  }

  /**
   * A node's classes: kept from an earlier call, or grouped from the evaluated specialization
   * with the fewest classes, or from the bottom node's classes (the distinct QI tuples, fewer
   * than the tuples when these also carry sensitive values), grouped once and kept.
   */
  private classesAt(id: number, levels: number[]): Classes {
    const known = this.byId.get(id);
    if (known) return known;
    if (!this.bottom) {
      const zero = levels.map(() => 0);
      const r = this.distinctTuples ? undefined : this.session.group(zero);
      // Every tuple its own class (ids in order of first appearance: class t is tuple t): the
      // counts are the sizes, and one identity serves as representatives and map.
      const own = r === undefined || r.groups === this.session.n;
      const groups = r === undefined ? this.session.n : r.groups;
      const identity = own ? new Int32Array(groups) : r.reps;
      for (let t = 0; own && t < identity.length; t++) identity[t] = t;
      this.bottom = new Classes(
        zero,
        groups,
        own ? this.problem.counts : r.sizes,
        identity,
        undefined,
        undefined,
        undefined,
        own ? identity : r.groupOf,
      );
    }
    // The bottom node's classes are those (a rollup would copy them, as many as the tuples).
    if (id === 0) return this.bottom;
    // The direct specializations first (the closest, so the fewest classes), else any kept node below.
    let from: Classes = this.bottom;
    for (const p of this.byId.size > 0 ? this.problem.lattice.predecessors(id) : []) {
      const c = this.byId.get(p);
      if (c && c.groups < from.groups) from = c;
    }
    if (from === this.bottom) {
      for (const s of this.snapshots) if (s.groups < from.groups && below(s.levels, levels)) from = s;
    }
    // Rather than from the bottom (or a node below this one's staging node), from the staging
    // node: the bottom with the widest attributes X raises raised one level. A few such nodes
    // serve every later X with the same pattern, at a fraction of the bottom's classes (Adult:
    // 12,458 → 1,900–5,500).
    const low = levels.map((l, i) => (this.wide.includes(i) ? Math.min(l, 1) : 0));
    if (
      !this.single &&
      low.some((l, i) => l !== levels[i]) &&
      low.some((l, i) => l !== from.levels[i]) &&
      below(from.levels, low)
    )
      from = this.classesAt(this.problem.lattice.index(low), low);

    if (from !== this.bottom) this.rollups++;
    const r = this.session.rollup(levels, from, this.keepMaps);
    const classes = new Classes(levels, r.groups, r.sizes, r.reps, r.map && from, r.map, this.session);
    this.snapshots.push(classes);
    this.byId.set(id, classes);
    classes.budget = this.budget;
    this.budget.cells += classes.cells;
    while (
      this.snapshots.length > 1 &&
      (this.snapshots.length > SNAPSHOT_COUNT || this.budget.cells > this.snapshotCells)
    ) {
      const old = this.snapshots.shift()!;
      this.byId.delete(this.problem.lattice.index(old.levels));
      this.budget.cells -= old.cells;
      old.budget = undefined;
    }
    return classes;
  }
}

/**
 * Rows in classes smaller than k (with `persons`, of fewer than k persons); `flags` (if given)
 * gets 1 for each such class.
 */
function rowsBelow(k: number, classes: Grouping, flags?: Uint8Array, persons?: Int32Array): number {
  const { groups, sizes } = classes;
  const counted = persons ?? sizes;
  let rows = 0;
  for (let g = 0; g < groups; g++) {
    if (counted[g]! < k) {
      rows += sizes[g]!;
      if (flags) flags[g] = 1;
    }
  }
  return rows;
}

/** The tuples in order of their person (a counting sort), and where each person's tuples start. */
function tuplesByPerson(entity: EntityProblem): { tuples: Int32Array; start: Int32Array } {
  const start = new Int32Array(entity.codes + 1);
  for (let t = 0; t < entity.of.length; t++) start[entity.of[t]! + 1]!++;
  for (let e = 0; e < entity.codes; e++) start[e + 1]! += start[e]!;
  const fill = start.slice(0, entity.codes);
  const tuples = new Int32Array(entity.of.length);
  for (let t = 0; t < entity.of.length; t++) tuples[fill[entity.of[t]!]!++] = t;
  return { tuples, start };
}

/** The smallest count among the classes not flagged (0 when every class is). */
function smallestRetained(counts: Int32Array, flagged: Uint8Array): number {
  let min = 0;
  for (let g = 0; g < flagged.length; g++)
    if (!flagged[g] && (min === 0 || counts[g]! < min)) min = counts[g]!;
  return min;
}

/** A node's classes as the metrics read them; the tuple → class map is composed only if read. */
function outcomeOf(
  classes: Classes,
  suppressed: Uint8Array,
  suppressedRows: number,
  retainedClasses: number,
  retainedSquares?: number,
): ClassOutcome {
  return {
    groups: classes.groups,
    sizes: classes.sizes,
    reps: classes.reps,
    suppressed,
    suppressedRows,
    retainedClasses,
    retainedSquares,
    get groupOf() {
      return classes.groupOf;
    },
  };
}

/** Every level of `a` at most the matching level of `b`: b generalizes a (or equals it). */
export function below(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i]! > b[i]!) return false;
  return true;
}
