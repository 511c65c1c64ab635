/**
 * A spec value allowed as a control character (the tab delimiter) written as its escape in the
 * JSON (`"\\t"`, a backslash and a t): the refusal tells the two apart, which print alike.
 */
import { describe, expect, it } from 'vitest';
import { SpecError } from '../../src/errors.ts';
import { parseSpec } from '../../src/release-spec/spec.ts';

/** A valid spec but for its format.delimiter. */
function withDelimiter(delimiter: string): unknown {
  return {
    input: 't.csv',
    format: { delimiter },
    attributes: { age: { type: 'quasi-identifying', hierarchy: { intervals: [10] } } },
    privacy: [{ model: 'k-anonymity', k: 2 }],
    method: { name: 'generalization' },
  };
}

function refusal(delimiter: string): SpecError {
  try {
    parseSpec(withDelimiter(delimiter), 'release.json');
  } catch (err) {
    if (err instanceof SpecError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('format.delimiter written as backslash-t', () => {
  it('is refused as the two characters it is, with the JSON for a tab', () => {
    const err = refusal('\\t');
    expect(err.code).toBe('E_SPEC_VALUE');
    expect(err.message).toBe(
      'release.json: format.delimiter is "\\\\t" in the JSON, two characters (a backslash, then t), not the tab it reads like',
    );
    expect(err.message).not.toContain('did you mean');
    expect(err.hint).toBe('write format.delimiter as "\\t" in the JSON (one tab character)');
  });

  it('a tab is taken, and another value still lists the allowed ones', () => {
    expect(() => parseSpec(withDelimiter('\t'), 'release.json')).not.toThrow();
    expect(refusal(':').message).toMatch(/^release\.json: format\.delimiter is ':', which is not one of/);
  });
});
