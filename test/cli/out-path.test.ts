/**
 * `--out` never lands on, in or around what a command reads, nor in a published release
 * (src/pipeline/out-path.ts): the check itself, then each command as the installed bin runs
 * it (needs `npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OutputError } from '../../src/errors.ts';
import { checkOut, type ReadPath } from '../../src/pipeline/out-path.ts';
import { TINY_CSV, tinyWorkspace } from '../helpers/tiny.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

/** The error checkOut throws (its code and message), or undefined when it allows the path. */
function refusal(out: string, reads: readonly ReadPath[], kind: 'file' | 'folder' | 'release') {
  try {
    checkOut(out, reads, kind);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(OutputError);
    return { code: (e as OutputError).code, message: (e as Error).message };
  }
}

const MANIFEST = JSON.stringify({ format: 'ppdp-release/1', runId: 'r', verified: true, files: [] });

describe('checkOut', () => {
  const ws = tinyWorkspace();
  const input: ReadPath = { path: ws.csv, what: 'the input' };
  const release = join(ws.dir, 'rel');
  mkdirSync(join(release, 'data'), { recursive: true });
  writeFileSync(join(release, 'manifest.json'), MANIFEST);
  symlinkSync(ws.dir, join(ws.dir, 'link'));
  symlinkSync(ws.csv, join(ws.dir, 'alias.csv'));

  it('refuses a file that is one read, however the path spells it', () => {
    for (const out of [ws.csv, join(ws.dir, '.', 'sub', '..', 't.csv'), join(ws.dir, 'link', 't.csv')]) {
      expect(refusal(out, [input], 'file')).toEqual({
        code: 'E_OUT_IN_INPUT',
        message: expect.stringMatching(
          /: is the input \(.*t\.csv\), which ppdp reads; writing there would replace it$/,
        ),
      });
    }
    expect(refusal(join(ws.dir, 'alias.csv'), [input], 'file')?.code).toBe('E_OUT_IN_INPUT'); // a link to it
    expect(refusal(join(ws.dir, 'T.csv'), [input], 'file')).toBeUndefined(); // another file on a case-sensitive disk
    expect(refusal(join(ws.dir, 'evaluate.json'), [input], 'file')).toBeUndefined();
  });

  it('refuses a folder output that is the folder of a read or contains one', () => {
    expect(refusal(join(ws.dir, 'link'), [input], 'folder')?.message).toMatch(/: is the input's own folder$/);
    expect(refusal(join(ws.dir, '..'), [input], 'folder')?.message).toMatch(
      /: contains the input \(ppdp-tiny-[^/]+\/t\.csv\), so sharing the folder would share it too$/,
    );
    expect(refusal(join(ws.dir, 'frontier'), [input], 'folder')).toBeUndefined();
  });

  it('refuses any path in a published release, the release folder itself only for a new release', () => {
    for (const kind of ['file', 'folder', 'release'] as const) {
      expect(refusal(join(release, 'data', 'x'), [], kind)).toEqual({
        code: 'E_OUT_IN_RELEASE',
        message: expect.stringMatching(
          /: lies inside the published release .*rel \(it holds a ppdp manifest\.json\)$/,
        ),
      });
    }
    expect(refusal(join(ws.dir, 'link', 'rel'), [], 'folder')?.message).toMatch(/: is the published release/);
    expect(refusal(release, [], 'release')).toBeUndefined(); // replaced by the new release
    // A folder a command reads: refused as such, whatever it holds.
    const reads = [{ path: release, what: 'the release being applied' }];
    expect(refusal(release, reads, 'release')).toEqual({
      code: 'E_OUT_IN_RELEASE',
      message: expect.stringMatching(
        /: is or lies inside the release being applied \(.*rel\), which ppdp reads$/,
      ),
    });
    // manifest.json of another kind makes no release.
    const other = join(ws.dir, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'manifest.json'), '{"name":"web app"}');
    expect(refusal(join(other, 'x.json'), [], 'file')).toBeUndefined();
  });

  it('refuses a folder for a file and a file for a folder', () => {
    expect(refusal(ws.dir, [], 'file')).toMatchObject({ code: 'E_OUT_IS_DIR' });
    expect(refusal(join(ws.dir, 'spec.json'), [], 'folder')).toMatchObject({ code: 'E_OUT_NOT_DIR' });
  });

  it('refuses a URL for a file or a folder: written locally, it would be a folder named s3:', () => {
    for (const kind of ['file', 'folder'] as const) {
      expect(refusal('s3://bucket/key', [], kind)).toEqual({
        code: 'E_OUT_NOT_LOCAL',
        message: '--out s3://bucket/key: --out takes a local path here, not a URL (s3:)',
      });
      expect(refusal('file:///tmp/x', [], kind)?.code).toBe('E_OUT_NOT_LOCAL');
      expect(refusal(join(ws.dir, 's3:', 'x'), [], kind)).toBeUndefined(); // a path, ./s3:/x
    }
  });
});

describe('each command refuses such an --out, and writes nothing (bundled CLI)', () => {
  const ws = tinyWorkspace();
  const ppdp = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: ws.dir });
  const refused = (r: ReturnType<typeof ppdp>, pattern: RegExp) => {
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(pattern);
    expect(r.stderr).toMatch(/\n {2}hint: /);
  };
  const spec = readFileSync(ws.spec, 'utf8');

  it('evaluate: not over its table, its spec, or a file of the release it reads', () => {
    refused(
      ppdp('evaluate', 't.csv', '--qi', 'zip,age,sex', '--out', './t.csv'),
      /^ppdp: error: --out \.\/t\.csv: is the table evaluated \(t\.csv\)/,
    );
    refused(
      ppdp('evaluate', 't.csv', '--spec', 'spec.json', '--out', 'spec.json'),
      /--out spec\.json: is the spec \(spec\.json\)/,
    );
    expect(ppdp('release', 'spec.json', '--out', 'rel', '--quiet').status).toBe(0);
    const report = readFileSync(join(ws.dir, 'rel', 'report.json'));
    refused(
      ppdp('evaluate', 'rel', '--spec', 'spec.json', '--out', 'rel/report.json'),
      /--out rel\/report\.json: is or lies inside the release evaluated \(rel\)/,
    );
    expect(readFileSync(join(ws.dir, 't.csv'), 'utf8')).toBe(TINY_CSV);
    expect(readFileSync(ws.spec, 'utf8')).toBe(spec);
    expect(readFileSync(join(ws.dir, 'rel', 'report.json')).equals(report)).toBe(true);
    // The release is intact: applying it still passes its manifest check.
    expect(ppdp('apply', 'rel', 'spec.json', '--out', 'again', '--quiet').status).toBe(0);
    expect(ppdp('evaluate', 'rel', '--spec', 'spec.json', '--out', 'evaluate.json').status).toBe(0);
  });

  it('explore: not into a published release, nor the spec’s folder', () => {
    expect(existsSync(join(ws.dir, 'rel', 'manifest.json'))).toBe(true);
    refused(
      ppdp('explore', 'spec.json', '--vary', 'k=2..3', '--out', 'rel'),
      /--out rel: is the published release rel \(it holds a ppdp manifest\.json\)/,
    );
    refused(
      ppdp('explore', 'spec.json', '--vary', 'k=2..3', '--out', '.'),
      /--out \.: is the input's own folder/,
    );
    expect(existsSync(join(ws.dir, 'rel', 'explore.html'))).toBe(false);
    expect(existsSync(join(ws.dir, 'explore.html'))).toBe(false);
  });

  it('release and apply --node: not inside another release', () => {
    refused(
      ppdp('release', 'spec.json', '--out', 'rel/inner', '--quiet'),
      /--out .*rel\/inner\/?: lies inside the published release rel/,
    );
    refused(
      ppdp('apply', '--node', 'sex=0', 'spec.json', '--out', 'rel/inner', '--quiet'),
      /lies inside the published release rel/,
    );
    expect(existsSync(join(ws.dir, 'rel', 'inner'))).toBe(false);
  });

  it('init --force: replaces an earlier spec, never its table', () => {
    refused(ppdp('init', 't.csv', '--out', 't.csv', '--force'), /--out .*t\.csv: is the table \(t\.csv\)/);
    expect(readFileSync(join(ws.dir, 't.csv'), 'utf8')).toBe(TINY_CSV);
  });

  it('reconstruct: not over a file of the release it reads', () => {
    const rows = Array.from(
      { length: 200 },
      (_, i) => `${i},${'FM'[i % 2]},${'NSE'[i % 3]},${i % 7 === 0 ? 'yes' : 'no'}`,
    );
    writeFileSync(join(ws.dir, 'd.csv'), `id,sex,region,hiv\n${rows.join('\n')}\n`);
    writeFileSync(
      join(ws.dir, 'rspec.json'),
      JSON.stringify({
        input: 'd.csv',
        attributes: {
          id: { type: 'identifying' },
          sex: { type: 'quasi-identifying' },
          region: { type: 'quasi-identifying' },
          hiv: { type: 'sensitive' },
        },
        privacy: [{ model: 'attribute-disclosure', attribute: 'hiv', tau: 0.99 }],
        method: {
          name: 'randomization',
          scenario: 'rr-s',
          matrices: {
            hiv: {
              categories: ['no', 'yes'],
              matrix: [
                [0.8, 0.3],
                [0.2, 0.7],
              ],
            },
          },
        },
        seed: 1,
      }),
    );
    const r = ppdp('release', 'rspec.json', '--out', 'rr', '--quiet');
    expect(r.status, r.stderr).toBe(0);
    const data = readFileSync(join(ws.dir, 'rr', 'data.csv'));
    refused(
      ppdp('reconstruct', 'rr', '--attributes', 'hiv', '--out', 'rr/data.csv'),
      /--out rr\/data\.csv: is or lies inside the release reconstructed \(rr\)/,
    );
    expect(readFileSync(join(ws.dir, 'rr', 'data.csv')).equals(data)).toBe(true);
    expect(ppdp('reconstruct', 'rr', '--attributes', 'hiv', '--out', 'hiv.csv').status).toBe(0);
    // A folder not there yet is made, as init and hierarchy make theirs.
    const made = ppdp('reconstruct', 'rr', '--attributes', 'hiv', '--out', 'new/sub/hiv.json');
    expect(made.status, made.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(ws.dir, 'new', 'sub', 'hiv.json'), 'utf8')).rows).toBe(200);
  });

  it('reconstruct, evaluate, hierarchy: replace their own earlier output, any other file only with --force', () => {
    const kept = (file: string, text: string) => expect(readFileSync(join(ws.dir, file), 'utf8')).toBe(text);
    const ok = (r: ReturnType<typeof ppdp>) => expect(r.status, r.stderr).toBe(0);
    const exists = (file: string, command: string) =>
      new RegExp(
        `^ppdp: error: ${file.replace('.', '\\.')} already exists \\(.*\\), and is no earlier output of ppdp ${command}\n {2}hint: choose another --out, or add --force to overwrite it`,
      );
    writeFileSync(join(ws.dir, 'notes.txt'), 'mine\n');
    // reconstruct reads only the release: the spec it was made from is kept all the same.
    const rspec = readFileSync(join(ws.dir, 'rspec.json'), 'utf8');
    const reconstruct = (...args: string[]) => ppdp('reconstruct', 'rr', '--attributes', 'hiv', ...args);
    refused(reconstruct('--out', 'rspec.json'), exists('rspec.json', 'reconstruct'));
    kept('rspec.json', rspec);
    refused(reconstruct('--out', 'notes.txt', '--format', 'csv'), exists('notes.txt', 'reconstruct'));
    kept('notes.txt', 'mine\n');
    // Its own CSV and JSON, whichever format is asked for now.
    ok(reconstruct('--out', 'hiv.csv'));
    ok(reconstruct('--out', 'hiv.csv', '--format', 'json'));
    ok(reconstruct('--out', 'hiv.csv', '--format', 'csv'));
    ok(reconstruct('--out', 'new/sub/hiv.json'));
    ok(reconstruct('--out', 'notes.txt', '--format', 'csv', '--force'));
    expect(readFileSync(join(ws.dir, 'notes.txt'), 'utf8')).toMatch(/^hiv,released,estimate,/);

    writeFileSync(join(ws.dir, 'notes.txt'), 'mine\n');
    const evaluate = (...args: string[]) => ppdp('evaluate', 't.csv', '--qi', 'sex', ...args);
    refused(evaluate('--out', 'rspec.json'), exists('rspec.json', 'evaluate'));
    kept('rspec.json', rspec);
    expect(existsSync(join(ws.dir, 'evaluate.json'))).toBe(true); // from the first test
    ok(evaluate('--out', 'evaluate.json'));
    ok(evaluate('--out', 'notes.txt', '--force'));
    expect(JSON.parse(readFileSync(join(ws.dir, 'notes.txt'), 'utf8')).rows).toBe(8);

    writeFileSync(join(ws.dir, 'notes.txt'), 'mine\n');
    const hierarchy = (...args: string[]) => ppdp('hierarchy', 'spec.json', ...args);
    refused(hierarchy('--column', 'sex', '--out', 'rspec.json'), exists('rspec.json', 'hierarchy'));
    refused(hierarchy('--column', 'sex', '--out', 'notes.txt'), exists('notes.txt', 'hierarchy'));
    // A table separated by ';' is no hierarchy: its rows end in different values.
    writeFileSync(join(ws.dir, 'semi.csv'), 'a;b\n1;2\n3;4\n');
    refused(hierarchy('--column', 'sex', '--out', 'semi.csv'), exists('semi.csv', 'hierarchy'));
    kept('rspec.json', rspec);
    kept('notes.txt', 'mine\n');
    ok(hierarchy('--column', 'sex', '--out', 'sex.csv'));
    writeFileSync(join(ws.dir, 'sex.csv'), 'F;*\nM;*\nX;*\n'); // edited, still a hierarchy
    ok(hierarchy('--column', 'sex', '--out', 'sex.csv'));
    kept('sex.csv', 'F;*\nM;*\n');
    ok(hierarchy('--out', 'hs'));
    ok(hierarchy('--out', 'hs'));
    writeFileSync(join(ws.dir, 'hs', 'sex.csv'), 'mine\n');
    refused(hierarchy('--out', 'hs'), exists('sex.csv', 'hierarchy'));
    kept('hs/sex.csv', 'mine\n');
    ok(hierarchy('--out', 'hs', '--force'));
    kept('hs/sex.csv', 'F;*\nM;*\n');
  });

  it('evaluate, reconstruct, hierarchy, explore, init: --out s3://… refused, no folder named s3: made', () => {
    const url =
      /--out (s3:\/\/b\/[a-z./]+): --out takes a local path here, not a URL \(s3:\)\n {2}hint: give a local/;
    refused(ppdp('evaluate', 't.csv', '--qi', 'sex', '--out', 's3://b/e.json'), url);
    refused(ppdp('reconstruct', 'rr', '--attributes', 'hiv', '--out', 's3://b/r.csv'), url);
    refused(ppdp('hierarchy', 'spec.json', '--column', 'sex', '--out', 's3://b/sex.csv'), url);
    refused(ppdp('hierarchy', 'spec.json', '--out', 's3://b/h'), url);
    refused(ppdp('explore', 'spec.json', '--vary', 'k=2..3', '--out', 's3://b/x'), url);
    refused(ppdp('init', 't.csv', '--out', 's3://b/r.json'), url);
    expect(existsSync(join(ws.dir, 's3:'))).toBe(false);
  });

  it('evaluate: makes the folder of --out', () => {
    const r = ppdp('evaluate', 't.csv', '--qi', 'zip,age,sex', '--out', 'made/deeper/evaluate.json');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(ws.dir, 'made', 'deeper', 'evaluate.json'), 'utf8')).rows).toBe(8);
  });
});
