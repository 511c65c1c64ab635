/** A growable array of 32-bit integers: `data`'s first `length` cells, room made by `reserve`. */
export class Int32s {
  data = new Int32Array(1024);
  length = 0;
  static sized(capacity: number): Int32s {
    const out = new Int32s();
    out.reserve(capacity);
    return out;
  }
  reserve(extra: number): void {
    if (this.length + extra <= this.data.length) return;
    const next = new Int32Array(Math.max(this.length + extra, 2 * this.data.length));
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }
  push(value: number): void {
    this.reserve(1);
    this.data[this.length++] = value;
  }
  /** The values as an array of their own. */
  slice(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

/** 0, 1, …, n - 1 (a loop: Int32Array.from with a function costs ten times as much). */
export function rowNumbers(n: number): Int32Array {
  const out = new Int32Array(n);
  for (let r = 0; r < n; r++) out[r] = r;
  return out;
}

let sharedRowNumbers: Int32Array = new Int32Array(0);

/** 0 … n − 1 as a view of one array kept for such reads: its callers never write to it. */
export function rowNumbersUpTo(n: number): Int32Array {
  if (sharedRowNumbers.length < n) sharedRowNumbers = rowNumbers(Math.max(n, 2 * sharedRowNumbers.length));
  return sharedRowNumbers.subarray(0, n);
}

/** `lists` one after another, as one array. */
export function joinInt32s(lists: readonly Int32Array[]): Int32Array {
  const out = new Int32Array(lists.reduce((n, list) => n + list.length, 0));
  let at = 0;
  for (const list of lists) {
    out.set(list, at);
    at += list.length;
  }
  return out;
}
