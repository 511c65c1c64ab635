/**
 * `--out` never lands on, in or around what a command reads, nor in a published release
 * (src/pipeline/out-path.ts): the check itself, then each command as the installed bin runs
 * it (needs `npm run build`).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OutputError } from '../../src/errors.ts';
import { checkOut, makeFolder, type ReadPath, writeAtomically } from '../../src/pipeline/out-path.ts';
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

  it('refuses a path under a file, for every kind, naming the file (creating its folder would fail)', () => {
    for (const kind of ['file', 'folder', 'release'] as const) {
      expect(refusal(join(ws.dir, 'spec.json', 'sub', 'x'), [], kind)).toEqual({
        code: 'E_OUT_NOT_DIR',
        message: expect.stringMatching(
          /: .*ppdp-tiny-[^/]+\/spec\.json is a file, not a folder, so nothing can be written under it$/,
        ),
      });
    }
    expect(refusal(join(ws.dir, 'new', 'sub', 'x'), [], 'file')).toBeUndefined();
  });

  it('a write the filesystem refuses is an OutputError naming the path, and leaves no temporary file', () => {
    const under = join(ws.dir, 'spec.json', 'x.json');
    for (const write of [
      () => writeAtomically(under, '{}\n'),
      () => makeFolder(join(ws.dir, 'spec.json', 'd')),
    ]) {
      expect(write).toThrow(OutputError);
      expect(write).toThrow(
        /spec\.json\/(x\.json|d): cannot be written \(a folder on its path is a file, E(EXIST|NOTDIR)\)$/,
      );
    }
    // Over a folder: the temporary file is written, the rename fails, the temporary file goes.
    mkdirSync(join(ws.dir, 'taken'));
    expect(() => writeAtomically(join(ws.dir, 'taken'), 'x')).toThrow(
      /taken: cannot be written \(it is a folder, EISDIR\)/,
    );
    expect(readdirSync(ws.dir).filter((f) => f.endsWith('.partial'))).toEqual([]);
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
    // Its own output in the format asked for now; one in the other format only with --force.
    ok(reconstruct('--out', 'hiv.csv'));
    ok(reconstruct('--out', 'hiv.csv', '--format', 'csv'));
    const csv = readFileSync(join(ws.dir, 'hiv.csv'), 'utf8');
    refused(reconstruct('--out', 'hiv.csv', '--format', 'json'), exists('hiv.csv', 'reconstruct'));
    kept('hiv.csv', csv);
    ok(reconstruct('--out', 'hiv.csv', '--format', 'json', '--force'));
    ok(reconstruct('--out', 'hiv.csv', '--format', 'json'));
    refused(reconstruct('--out', 'hiv.csv', '--format', 'csv'), exists('hiv.csv', 'reconstruct'));
    ok(reconstruct('--out', 'new/sub/hiv.json'));
    refused(reconstruct('--out', 'new/sub/hiv.json', '--format', 'csv'), exists('hiv.json', 'reconstruct'));
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

  it('explore: replaces its own earlier files; another file of their names, or a folder holding others, only with --force', () => {
    const explore = (...args: string[]) =>
      ppdp('explore', 'spec.json', '--vary', 'k=2..3', '--quiet', ...args);
    const ok = (r: ReturnType<typeof ppdp>) => expect(r.status, r.stderr).toBe(0);
    ok(explore('--out', 'fr'));
    ok(explore('--out', 'fr', '--vary', 'maxSuppression=0,0.5')); // its own files, another grid
    expect(readFileSync(join(ws.dir, 'fr', 'frontier.csv'), 'utf8')).toMatch(/^k,maxSuppression,feasible,/);
    // A person's own files of those names.
    mkdirSync(join(ws.dir, 'mine'));
    writeFileSync(join(ws.dir, 'mine', 'frontier.csv'), 'my spreadsheet\n');
    writeFileSync(join(ws.dir, 'mine', 'explore.html'), '<p>my page</p>\n');
    refused(
      explore('--out', 'mine'),
      /^ppdp: error: frontier\.csv already exists \(.*\), and is no earlier output of ppdp explore\n {2}hint: choose another --out, or add --force/,
    );
    writeFileSync(join(ws.dir, 'mine', 'frontier.csv'), readFileSync(join(ws.dir, 'fr', 'frontier.csv')));
    refused(explore('--out', 'mine'), /^ppdp: error: explore\.html already exists/);
    expect(readFileSync(join(ws.dir, 'mine', 'explore.html'), 'utf8')).toBe('<p>my page</p>\n');
    expect(existsSync(join(ws.dir, 'mine', 'frontier.json'))).toBe(false);
    // A folder holding other files: explore would write beside them.
    writeFileSync(join(ws.dir, 'fr', 'keep.txt'), 'mine\n');
    refused(
      explore('--out', 'fr'),
      /^ppdp: error: --out fr: holds an entry ppdp explore does not write \(keep\.txt\);.*\n {2}hint: choose a new or empty folder, or add --force/,
    );
    ok(explore('--out', 'fr', '--force'));
    ok(explore('--out', 'mine', '--force'));
    expect(readFileSync(join(ws.dir, 'mine', 'explore.html'), 'utf8')).toMatch(/<title>ppdp explore — /);
    expect(readFileSync(join(ws.dir, 'fr', 'keep.txt'), 'utf8')).toBe('mine\n');
  });

  it('every command: an --out under a file is refused before any work, naming the file, nothing written', () => {
    writeFileSync(join(ws.dir, 'afile'), 'mine\n');
    const under =
      /^ppdp: error: --out [^\n]*: afile is a file, not a folder, so nothing can be written under it\n {2}hint: /;
    refused(ppdp('release', 'spec.json', '--out', 'afile/sub', '--quiet'), under);
    refused(ppdp('apply', 'rel', 'spec.json', '--out', 'afile/sub', '--quiet'), under);
    refused(ppdp('evaluate', 't.csv', '--qi', 'sex', '--out', 'afile/e.json'), under);
    refused(ppdp('hierarchy', 'spec.json', '--column', 'sex', '--out', 'afile/sex.csv'), under);
    refused(ppdp('hierarchy', 'spec.json', '--out', 'afile/h'), under);
    refused(ppdp('explore', 'spec.json', '--vary', 'k=2..3', '--out', 'afile/x'), under);
    refused(ppdp('init', 't.csv', '--out', 'afile/r.json'), under);
    refused(ppdp('reconstruct', 'rr', '--attributes', 'hiv', '--out', 'afile/r.csv'), under);
    // hierarchy --out <folder> that is a file: named as given.
    refused(
      ppdp('hierarchy', 'spec.json', '--out', 'afile'),
      /^ppdp: error: --out afile: afile is a file, not a folder/,
    );
    expect(readFileSync(join(ws.dir, 'afile'), 'utf8')).toBe('mine\n');
  });

  it('evaluate: makes the folder of --out', () => {
    const r = ppdp('evaluate', 't.csv', '--qi', 'zip,age,sex', '--out', 'made/deeper/evaluate.json');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(ws.dir, 'made', 'deeper', 'evaluate.json'), 'utf8')).rows).toBe(8);
  });
});

// Root may write anywhere: as root, the commands run as user nobody (setpriv), the others as themselves.
const ROOT = process.getuid?.() === 0;
const AS_OTHER = ROOT ? ['--reuid=65534', '--regid=65534', '--clear-groups'] : [];
const canDrop = !ROOT || spawnSync('setpriv', ['--version']).status === 0;

describe.skipIf(process.platform === 'win32' || !canDrop)(
  'an --out in a folder this user may not write in',
  () => {
    const ws = tinyWorkspace();
    chmodSync(ws.dir, 0o755);
    const ro = join(ws.dir, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o555); // root's as root: not nobody's to write in either way
    const tmp = join(ws.dir, 'tmp'); // a release's work area
    mkdirSync(tmp);
    chmodSync(tmp, 0o777);
    const ppdp = (...args: string[]) =>
      ROOT
        ? spawnSync('setpriv', [...AS_OTHER, process.execPath, CLI, ...args], {
            encoding: 'utf8',
            cwd: ws.dir,
            env: { ...process.env, HOME: tmp, TMPDIR: tmp },
          })
        : spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: ws.dir });

    it('every command refuses it before any work, naming the folder (it crashed when writing, exit 70)', () => {
      for (const args of [
        ['init', 't.csv', '--out', 'ro/release.json'],
        ['hierarchy', 'spec.json', '--out', 'ro/h'],
        ['hierarchy', 'spec.json', '--column', 'sex', '--out', 'ro/sex.csv'],
        ['evaluate', 't.csv', '--qi', 'sex', '--out', 'ro/e.json'],
        ['explore', 'spec.json', '--vary', 'k=2..3', '--out', 'ro/x'],
        ['release', 'spec.json', '--out', 'ro/rel'],
      ]) {
        const r = ppdp(...args);
        expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toMatch(
          /^ppdp: error: --out [^\n]*: this user may not write in the folder ro\n {2}hint: choose an --out in a folder you may write to/,
        );
      }
      expect(readdirSync(ro)).toEqual([]);
    });
  },
);
