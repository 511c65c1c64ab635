/**
 * Escaping and number formatting for the HTML report. Formatting is done by hand so the output
 * never depends on ICU or the locale: two renders of one report are byte-equal.
 */

import { showBidi } from '../util/format.ts';

export { showBidi };

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Escapes text for element content and quoted attribute values alike (the report is untrusted
 * input), with bidi controls shown visibly (showBidi).
 */
export function esc(value: string | number): string {
  return showBidi(String(value)).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

export const DASH = '—';

/** Rounds to an integer and adds thousands separators. */
export function fmtInt(n: number): string {
  if (!Number.isFinite(n)) return DASH;
  const r = Math.round(n);
  const digits = Math.abs(r)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (r < 0 ? '-' : '') + digits;
}

/** Integers with thousands separators, fractions with 4 significant digits (rounded to whole from 1,000). */
export function fmtNum(n: number): string {
  if (!Number.isFinite(n)) return DASH;
  if (Number.isInteger(n)) return fmtInt(n);
  // From 1,000 up, 4 significant digits would zero out integer digits (98,770); whole numbers read better.
  if (Math.abs(n) >= 999.95) return fmtInt(n);
  return String(Number(n.toPrecision(4)));
}

/**
 * The numbers in a line of text (a verification check's detail) formatted as fmtNum does:
 * thousands separators, 4 significant digits. Digits inside words, paths, versions and dates
 * (`part-00012`, `1.2.3`, `2026-01-31`) are left as written.
 */
export function fmtNumbersIn(text: string): string {
  return text.replace(/(?<![\w.\-/:])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.\-/:]*\d)(?![\w%])/gi, (token) =>
    fmtNum(Number(token)),
  );
}

export function fmtPct(share: number): string {
  return Number.isFinite(share) ? `${fmtNum(share * 100)}%` : DASH;
}

/** `a / b`, or NaN (rendered as a dash) when the denominator is not positive. */
export function ratio(a: number, b: number): number {
  return b > 0 ? a / b : Number.NaN;
}

/** "1 in N" is how publishers usually talk about re-identification odds. */
export function oneIn(risk: number): string {
  return risk > 0 && Number.isFinite(risk) ? ` (1 in ${fmtNum(1 / risk)})` : '';
}

/** Short SVG coordinates keep the markup small and stable. */
export function px(n: number): string {
  return String(Math.round(n * 10) / 10);
}

/** `fooBarBaz` → `foo bar baz`: the last resort for a key no label names. */
export function humanize(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[-_]+/g, ' ')
    .toLowerCase();
}

/** First letter up: method facts come in lower case. */
export function capitalize(text: string): string {
  // ASCII only: a leading Greek letter (γ, τ) names a quantity and keeps its case.
  return /^[a-z]/.test(text) ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}
