/**
 * A path that names a folder where a file is wanted: the spec itself, an attribute's hierarchy
 * file, a population table. Each is refused before any work, naming the setting and saying it
 * is a folder (checkSpecFiles, loadSpec), where `release` crashed with EISDIR and `hierarchy
 * check` said "not found".
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { release } from '../../src/api.ts';
import { PpdpError } from '../../src/errors.ts';
import { readHierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { checkSpecFiles, loadSpec } from '../../src/release-spec/spec.ts';
import { thrown as thrownOf } from '../helpers/thrown.ts';
import { TINY_SPEC, tinyWorkspace } from '../helpers/tiny.ts';

/** The refusal's code, message and hint. */
const thrown = (run: () => unknown) => {
  const { code, message, hint } = thrownOf(run, PpdpError);
  return { code, message, hint };
};

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

/** The error `run` throws, as code, message and hint. */

describe('a folder where the spec names a file', () => {
  const ws = tinyWorkspace();
  mkdirSync(join(ws.dir, 'hd'));
  const spec = join(ws.dir, 'hd-spec.json');
  writeFileSync(
    spec,
    JSON.stringify({
      ...TINY_SPEC,
      attributes: { ...TINY_SPEC.attributes, sex: { type: 'quasi-identifying', hierarchy: 'hd' } },
    }),
  );
  const folderHierarchy = {
    code: 'E_HIERARCHY_MISSING',
    message: expect.stringMatching(
      /^hd-spec\.json: attributes\.sex\.hierarchy 'hd' is a folder, not a file \(.*hd\)$/,
    ),
    hint: expect.stringContaining('e.g. hd/sex.csv'),
  };

  it('checkSpecFiles: a hierarchy that is a folder, naming the attribute and the setting', () => {
    expect(thrown(() => checkSpecFiles(loadSpec(spec)))).toEqual(folderHierarchy);
  });

  it('release: refused as such, not a crash reading it', async () => {
    await expect(release(spec, { out: join(ws.dir, 'out'), engine: 'direct' })).rejects.toMatchObject({
      code: 'E_HIERARCHY_MISSING',
      message: folderHierarchy.message,
    });
  });

  it('the spec path itself, and a hierarchy file read directly', () => {
    expect(thrown(() => loadSpec(join(ws.dir, 'hd')))).toEqual({
      code: 'E_SPEC_MISSING',
      message: expect.stringMatching(/hd: is a folder, not a release spec file$/),
      hint: expect.stringMatching(/^name the spec file inside it, e\.g\. .*hd\/release\.json$/),
    });
    expect(thrown(() => readHierarchyRows(join(ws.dir, 'hd')))).toMatchObject({
      code: 'E_HIERARCHY_MISSING',
      message: expect.stringMatching(/^hd: is a folder, not a hierarchy file/),
    });
    // A missing one is still "not found".
    expect(thrown(() => loadSpec(join(ws.dir, 'none.json'))).message).toMatch(/release spec not found$/);
  });

  it('hierarchy check --spec says the same (bundled CLI)', () => {
    const r = spawnSync(process.execPath, [CLI, 'hierarchy', 'check', '--spec', spec], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^ppdp: error: hd-spec\.json: attributes\.sex\.hierarchy 'hd' is a folder, not a file/,
    );
  });
});

describe('a file the spec names that is not there', () => {
  const ws = tinyWorkspace();
  const spec = join(ws.dir, 'gone-spec.json');
  writeFileSync(
    spec,
    JSON.stringify({
      ...TINY_SPEC,
      attributes: { ...TINY_SPEC.attributes, sex: { type: 'quasi-identifying', hierarchy: 'sex.csv' } },
    }),
  );

  it('a local spec may name it by an absolute path', () => {
    expect(thrown(() => checkSpecFiles(loadSpec(spec))).hint).toMatch(/\(or to an absolute path\)$/);
  });

  it('a spec read from a bucket is told to upload it into its own folder, never an absolute path', () => {
    const { code, message, hint } = thrown(() => checkSpecFiles(loadSpec(spec), 's3://bkt/inbox/h/'));
    expect(code).toBe('E_HIERARCHY_MISSING');
    expect(message).toContain('s3://bkt/inbox/h/sex.csv');
    expect(hint).toBe(
      'upload the file to s3://bkt/inbox/h/sex.csv, or change attributes.sex.hierarchy in gone-spec.json to the name of a file inside s3://bkt/inbox/h',
    );
  });
});
