/**
 * What follows from a column's dictionary and a setting alone (a builder's hierarchy, its
 * rows), made once for the shards of one input: each shard state decodes its own copy of the
 * input's dictionary, so a kept result is found by the dictionary's values, not its identity.
 * A few are kept, the latest first; each holds its dictionary.
 */
export class PerDictionary<T> {
  private readonly kept: { key: string; dictionary: readonly string[]; value: T }[] = [];

  constructor(private readonly size: number) {
    every.add(this);
  }

  clear(): void {
    this.kept.length = 0;
  }

  /** The value kept for `key` and these values, else `make()`'s (kept unless it throws). */
  get(key: string, dictionary: readonly string[], make: () => T): T {
    const found = this.kept.find((k) => k.key === key && sameValues(k.dictionary, dictionary));
    if (found) return found.value;
    const value = make();
    if (!keeping) return value;
    this.kept.unshift({ key, dictionary, value });
    if (this.kept.length > this.size) this.kept.pop();
    return value;
  }
}

const every = new Set<PerDictionary<unknown>>();
let keeping = true;

/**
 * Whether anything is kept from now on (a Lambda function keeps nothing between invocations;
 * a worker thread of the local engine serves one run and keeps).
 */
export function keepPerDictionary(keep: boolean): void {
  keeping = keep;
  if (!keep) forgetPerDictionary();
}

/** Drops what every PerDictionary keeps (a run's end: nothing of it is needed again). */
export function forgetPerDictionary(): void {
  for (const kept of every) kept.clear();
}

/** Same strings in the same order. */
function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
