import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { digestInput, inputSize, openInput, readInputBytes } from '../../src/data/input.ts';
import { InputError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('input files', () => {
  it('digestInput is the SHA-256 of the bytes, read in pieces', () => {
    for (const size of [0, 1, 8 * 1024 * 1024 + 3]) {
      const bytes = Buffer.alloc(size, 7);
      const path = join(dir, `d${size}.bin`);
      writeFileSync(path, bytes);
      expect(digestInput(path).equals(createHash('sha256').update(bytes).digest())).toBe(true);
      expect(Buffer.from(readInputBytes(path)).equals(bytes)).toBe(true);
    }
  });

  it('names a missing file and a directory with E_INPUT_MISSING', () => {
    const sub = join(dir, 'folder.csv');
    mkdirSync(sub);
    for (const path of [join(dir, 'none.csv'), sub]) {
      // A folder input's digest is its files': see the next test.
      for (const read of path === sub
        ? [openInput, readInputBytes]
        : [openInput, digestInput, readInputBytes]) {
        try {
          read(path);
          expect.unreachable();
        } catch (err) {
          expect(err).toBeInstanceOf(InputError);
          expect((err as InputError).code).toBe('E_INPUT_MISSING');
        }
      }
    }
  });

  it("a folder's digest is its files' names and digests in name order; an empty folder is named", () => {
    const folder = join(dir, 'parts');
    mkdirSync(folder);
    expect(() => digestInput(folder)).toThrow(/parts: the input folder holds no file to read/);
    writeFileSync(join(folder, 'b.csv'), 'B');
    writeFileSync(join(folder, 'a.csv'), 'A');
    writeFileSync(join(folder, '_SUCCESS'), '');
    const sha = (x: string) => createHash('sha256').update(x).digest();
    const expected = createHash('sha256')
      .update('a.csv\0')
      .update(sha('A'))
      .update('b.csv\0')
      .update(sha('B'))
      .digest();
    expect(digestInput(folder).equals(expected)).toBe(true);
    expect(inputSize(folder)).toBe(2);
  });
});
