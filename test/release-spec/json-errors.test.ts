/**
 * Where a spec's JSON breaks, for a person: line, column, the offending line with a caret, and
 * the likely fix — for the mistakes people make by hand in JSON.
 */
import { describe, expect, it } from 'vitest';
import { locateJsonError } from '../../src/release-spec/json.ts';

const GOOD = '{\n  "privacy": [{ "model": "k-anonymity", "k": 5 }],\n  "seed": 1\n}\n';

function locate(text: string) {
  try {
    JSON.parse(text);
  } catch (e) {
    return locateJsonError(text, e as Error);
  }
  throw new Error('valid JSON');
}

describe('locateJsonError', () => {
  it.each([
    ['a comma after the last entry', GOOD.replace('"seed": 1', '"seed": 1,'), 3, 12, /^remove this comma/],
    ['single quotes', GOOD.replace('"k": 5', "'k': 5"), 2, 41, /^use double quotes/],
    ['a missing colon', GOOD.replace('"seed": 1', '"seed" 1'), 3, 10, /^add a ':'/],
    [
      'a missing comma between entries',
      GOOD.replace('}],', '}]'),
      3,
      3,
      /missing comma at the end of the entry before \(line 2\)/,
    ],
    ['a file cut short', GOOD.slice(0, 30), 2, 29, /^the file ends too early/],
    ['an empty file', '', 1, 1, /^the file ends too early/],
    ['a bare word', GOOD.replace('"k": 5', '"k": five'), 2, 46, /^write text in double quotes/],
    ['a stray character', GOOD.replace('"k": 5', '"k": 5%'), 2, 47, /^fix the JSON at line 2, column 47$/],
  ])('%s', (_, text, line, column, hint) => {
    const at = locate(text);
    expect([at.line, at.column]).toEqual([line, column]);
    expect(at.hint).toMatch(hint);
    // The excerpt is the offending line, with a caret under the column.
    const [shown, caret] = at.excerpt.split('\n');
    const gutter = `${line} | `;
    expect(shown).toBe(gutter + text.split('\n')[line - 1]);
    expect(caret!.indexOf('^')).toBe(gutter.length + column - 1);
    expect(at.problem).not.toMatch(/position|line \d/);
  });
});
