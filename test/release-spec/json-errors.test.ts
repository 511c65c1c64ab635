/**
 * Where a spec's JSON breaks, for a person: line, column, what was expected and the likely fix —
 * for the mistakes people make by hand in JSON — quoting nothing of the file (a spec may hold
 * data values; a file in a spec's place may be a table of people).
 */
import { describe, expect, it } from 'vitest';
import { locateJsonError } from '../../src/release-spec/json.ts';

const GOOD = '{\n  "privacy": [{ "model": "k-anonymity", "k": 5 }],\n  "seed": 1\n}\n';

function locate(text: string) {
  try {
    JSON.parse(text);
  } catch {
    return locateJsonError(text);
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
    ['a // comment', GOOD.replace('"seed": 1', '// the seed\n  "seed": 1'), 3, 3, /^JSON has no comments/],
    [
      'a comment after a value',
      GOOD.replace('"seed": 1', '"seed": 1 // fixed'),
      3,
      13,
      /^JSON has no comments/,
    ],
  ])('%s', (_, text, line, column, hint) => {
    const at = locate(text);
    expect([at.line, at.column]).toEqual([line, column]);
    expect(at.hint).toMatch(hint);
    expect(at.problem).not.toMatch(/position|line \d/);
    expect(Object.keys(at).sort()).toEqual(['column', 'hint', 'line', 'problem']);
  });
});

describe('locateJsonError quotes nothing of the text', () => {
  it.each([
    ['a CSV row of a person', 'Ada Moss;47906;29;female;flu\n'],
    ['a spec whose groups hold data values', '{ "groups": { "zip": [["47906" "47907"]] } }'],
    ['binary bytes', 'ARROW1\0\0\u00ff\u0001\u0002rest'],
  ])('%s', (_, text) => {
    const at = locate(text);
    const said = `${at.problem} ${at.hint}`;
    for (const word of ['Ada', 'Moss', '47906', 'flu', 'ARROW', 'rest']) expect(said).not.toContain(word);
    expect([...said].some((c) => c < ' ' || c === '\u00ff')).toBe(false);
  });
});
