/**
 * Excel number formats that write a whole number as a code — a ZIP code `00000`, ZIP+4
 * `00000-0000`, a social security number `000-00-0000`, a phone number
 * `[<=9999999]###-####;(###) ###-####` — applied as Excel shows the cell, and as its CSV export
 * writes it (`1007` in `00000` is `01007`). Formats of a quantity (decimals, thousands
 * separators, percent, currency, exponents, fractions, units) are not codes: such a cell stays
 * the number it holds (docs/release-spec.md, "Excel input").
 */

/** A digit placeholder (`0` pads with a zero, `#` shows nothing) or literal text. */
type Token = { readonly digit: '0' | '#' } | { readonly text: string };

interface Section {
  readonly tokens: readonly Token[];
  /** `[<=9999999]`: the numbers the section is for. */
  readonly condition?: { readonly op: string; readonly value: number };
}

/** A format whose sections (for numbers) are all digit patterns. */
export interface DigitFormat {
  readonly sections: readonly Section[];
}

/** Characters a code's format may show between its digits: separators, never a unit or a currency. */
const SEPARATORS = /^[-() ]*$/;

/**
 * The digit patterns of a format code, or undefined when any section for numbers shows
 * anything but digits and separators (`0.00`, `#,##0`, `0%`, `"€"0`, `0 "kg"`, dates, General).
 */
export function digitFormat(code: string): DigitFormat | undefined {
  const parts = splitSections(code);
  if (!parts) return undefined;
  // A fourth section is for text cells: not a number's.
  const sections: Section[] = [];
  for (const part of parts.slice(0, 3)) {
    const section = digitSection(part);
    if (!section) return undefined;
    sections.push(section);
  }
  return sections.some((s) => s.tokens.some((t) => 'digit' in t)) ? { sections } : undefined;
}

/** A format code's sections, split at `;` outside quotes and escapes; undefined if a quote is not closed. */
function splitSections(code: string): string[] | undefined {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code[i];
    if (c === '\\') i++;
    else if (c === '"') {
      i = code.indexOf('"', i + 1);
      if (i < 0) return undefined;
    } else if (c === ';') {
      out.push(code.slice(start, i));
      start = i + 1;
    }
  }
  out.push(code.slice(start));
  return out;
}

function digitSection(part: string): Section | undefined {
  const tokens: Token[] = [];
  let condition: Section['condition'];
  let i = 0;
  // Leading brackets: a colour, a condition, a locale without a currency symbol.
  for (let m = /^\[([^\]]*)\]/.exec(part); m; m = /^\[([^\]]*)\]/.exec(part.slice(i))) {
    const inner = m[1]!;
    const cond = /^(<=|>=|<>|<|>|=)\s*(-?\d+(?:\.\d+)?)$/.exec(inner);
    if (cond) condition = { op: cond[1]!, value: Number(cond[2]) };
    else if (!/^(?:[A-Za-z]+|Color\d+|\$-[0-9A-Fa-f]+)$/.test(inner)) return undefined;
    i += m[0].length;
  }
  const literal = (text: string) => {
    const last = tokens.at(-1);
    if (last && 'text' in last) tokens[tokens.length - 1] = { text: last.text + text };
    else tokens.push({ text });
  };
  for (; i < part.length; i++) {
    const c = part[i]!;
    if (c === '0' || c === '#') tokens.push({ digit: c });
    else if (c === '\\') literal(part[++i] ?? '');
    else if (c === '"') {
      const end = part.indexOf('"', i + 1);
      literal(part.slice(i + 1, end));
      i = end;
    } else literal(c);
  }
  const texts = tokens.flatMap((t) => ('text' in t ? [t.text] : []));
  if (!texts.every((t) => SEPARATORS.test(t))) return undefined;
  return condition ? { tokens, condition } : { tokens };
}

function holds(condition: NonNullable<Section['condition']>, n: number): boolean {
  switch (condition.op) {
    case '<':
      return n < condition.value;
    case '<=':
      return n <= condition.value;
    case '>':
      return n > condition.value;
    case '>=':
      return n >= condition.value;
    case '=':
      return n === condition.value;
    default:
      return n !== condition.value;
  }
}

/** The section Excel shows a number from 0 up with: by the conditions, if any, else the first (the third for zero). */
function sectionFor(format: DigitFormat, n: number): Section | undefined {
  const [first, second, third] = format.sections;
  if (format.sections.some((s) => s.condition)) {
    if (first!.condition ? holds(first!.condition, n) : true) return first;
    if (second && (!second.condition || holds(second.condition, n))) return second;
    return third;
  }
  return n === 0 && third ? third : first;
}

/**
 * A whole number from 0 up as `format` shows it: the digits fill the placeholders from the
 * right, the leftmost one takes any digits left over, `0` placeholders without a digit show a
 * zero. Undefined for any other number (a fraction would be rounded, a negative one signed by
 * the section for negatives), and when the text would show no digit: the number as it is then.
 */
export function digitText(n: number, format: DigitFormat): string | undefined {
  if (!Number.isSafeInteger(n) || n < 0) return undefined;
  const section = sectionFor(format, n);
  if (!section) return undefined;
  const places = section.tokens.filter((t) => 'digit' in t) as { digit: '0' | '#' }[];
  if (places.length === 0) return undefined;
  const firstZero = places.findIndex((p) => p.digit === '0');
  const least = firstZero < 0 ? 0 : places.length - firstZero;
  const digits = (n === 0 ? '' : String(n)).padStart(least, '0');
  let left = digits.length;
  let place = places.length;
  let out = '';
  for (let k = section.tokens.length - 1; k >= 0; k--) {
    const t = section.tokens[k]!;
    if ('text' in t) {
      out = t.text + out;
      continue;
    }
    place--;
    const take = place === 0 ? left : Math.min(1, left);
    out = digits.slice(left - take, left) + out;
    left -= take;
  }
  return /\d/.test(out) ? out : undefined;
}
