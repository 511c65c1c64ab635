/**
 * Each string's position in a list of distinct strings, through an open-addressing table of
 * typed arrays: for lists of millions (a column of distinct values passed through), a Map of
 * the strings costs an entry object each and seconds to fill.
 */
import { mix32 } from './keys.ts';

/** Per value of `values`, the position of the equal string in `list` (-1 where none is). */
export function positionsIn(values: readonly string[], list: readonly string[]): Int32Array {
  let size = 16;
  while (size < 2 * list.length) size *= 2;
  const mask = size - 1;
  // Slot s holds a position in `list` + 1 (0: empty), under that string's hash.
  const slots = new Int32Array(size);
  for (let p = 0; p < list.length; p++) {
    let at = hashOf(list[p]!) & mask;
    for (;;) {
      const held = slots[at]!;
      if (held === 0) {
        slots[at] = p + 1;
        break;
      }
      // A string listed twice keeps its last position (as a Map filled in order would).
      if (list[held - 1] === list[p]) {
        slots[at] = p + 1;
        break;
      }
      at = (at + 1) & mask;
    }
  }
  return Int32Array.from(values, (v) => {
    let at = hashOf(v) & mask;
    for (;;) {
      const held = slots[at]!;
      if (held === 0) return -1;
      if (list[held - 1] === v) return held - 1;
      at = (at + 1) & mask;
    }
  });
}

/** FNV-1a over the UTF-16 units, then mixed so that every bit reaches the low ones. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 0x01000193);
  return mix32(h);
}
