/**
 * Formatting for people, without the engine's locale data: the first `toLocaleString` or
 * `localeCompare` in a process loads ICU's tables (about 20 ms here), a large share of a
 * cold release.
 */

/** An integer with thousands separators, `1,234,567` (as `toLocaleString('en')` gives it). */
export function thousands(n: number): string {
  if (!Number.isInteger(n)) return n.toLocaleString('en');
  const digits = Math.abs(n).toString();
  return (n < 0 ? '-' : '') + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * `a k-anonymity model`, `an attribute-disclosure model`: the article by the phrase's first
 * letter (the names ppdp puts after one: models, formats).
 */
export function withArticle(phrase: string): string {
  return `${/^[aeiou]/i.test(phrase) ? 'an' : 'a'} ${phrase}`;
}

/** "1 row", "3 rows", "1,234 values": a count with its noun, singular for one (`plural` for a noun not made with s: classes). */
export function counted(n: number, what: string, plural = `${what}s`): string {
  return `${thousands(n)} ${n === 1 ? what : plural}`;
}

/**
 * A generalization lattice's size, `80,000,000`, from each quasi-identifier's levels (height +
 * 1), whose product it is: exact while it is a safe integer, else `9.33e+698` from the sum of
 * their logarithms (the product itself overflows to Infinity past 1.8e308).
 */
export function latticeSize(levels: readonly number[]): string {
  const size = levels.reduce((n, l) => n * l, 1);
  if (size <= Number.MAX_SAFE_INTEGER) return thousands(size);
  const log = levels.reduce((s, l) => s + Math.log10(l), 0);
  const exponent = Math.floor(log);
  // 9.996 rounds to 10.00: carried into the exponent, as toExponential carries it.
  const mantissa = Number((10 ** (log - exponent)).toFixed(2));
  return mantissa >= 10
    ? `${(mantissa / 10).toFixed(2)}e+${exponent + 1}`
    : `${mantissa.toFixed(2)}e+${exponent}`;
}

/** `1 node`, `80,000,000 nodes`, `9.33e+698 nodes`: a lattice's size (latticeSize) with its noun. */
export function latticeNodes(levels: readonly number[]): string {
  const size = latticeSize(levels);
  return `${size} node${size === '1' ? '' : 's'}`;
}

/**
 * `a`, `a and b`, `a, b and c`; past `max` items, the first `max` and "and N more", so that a
 * message about a table of 1,000 columns stays a line. `last` joins the last item: ` or ` (then
 * "or N more"), or `, ` for a plain list.
 */
export function inWords(items: readonly string[], max = 10, last = ' and '): string {
  if (items.length <= 1) return items[0] ?? '';
  if (items.length > max)
    return `${items.slice(0, max).join(', ')} ${last.trim() === 'or' ? 'or' : 'and'} ${thousands(items.length - max)} more`;
  return `${items.slice(0, -1).join(', ')}${last}${items.at(-1)}`;
}

/** Orders names by their UTF-16 code units (file names in a manifest: stable everywhere). */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The bidirectional controls (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI, LRM, RLM, ALM): in a
 * column name, a value or a file name they would reorder the text shown around them (a name
 * read backwards, a figure appearing in another cell's place).
 */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** Bidi controls shown as what they are, `<U+202E>`, instead of acting on the text around them. */
export function showBidi(value: string): string {
  return value.replace(
    BIDI_CONTROLS,
    (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`,
  );
}

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text for a terminal: control characters (C0, DEL, C1) escaped (`\n`, `\u001b`) and bidi
 * controls shown (showBidi), so that a name from a spec, a file or a header cannot move the
 * cursor, colour the screen, print a line of its own or read backwards.
 */
export function printable(text: string): string {
  return showBidi(
    text.replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters escaped
      /[\u0000-\u001f\u007f-\u009f]/g,
      (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ),
  );
}
