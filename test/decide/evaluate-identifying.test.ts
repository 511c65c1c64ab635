/**
 * evaluate with a spec that marks a column identifying, evaluating a table that still holds it
 * (raw input, or another tool's output): the risks leave the column out, so the summary and the
 * JSON say, naming the column, that it is there.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { runCommand } from '../helpers/command.ts';
import { TINY_SPEC, tinyWorkspace } from '../helpers/tiny.ts';

const ws = tinyWorkspace();

describe('evaluate, an identifying column present in the table', () => {
  it('is a caution in the summary and the JSON, naming the column', () => {
    const json = join(ws.dir, 'evaluate.json');
    const r = runCommand(() => evaluateCommand([ws.csv, '--spec', ws.spec, '--out', json]));
    expect(r.status).toBe(0);
    const caution =
      'the table holds id, a column the spec marks identifying (a release drops it): the risks here leave it out, and it may name the person of each row';
    expect(r.stdout).toContain(`  caution: ${caution}\n`);
    expect(JSON.parse(readFileSync(json, 'utf8')).cautions).toEqual([caution]);
  });

  it('several are named together', () => {
    const spec = join(ws.dir, 'two.json');
    writeFileSync(
      spec,
      JSON.stringify({ ...TINY_SPEC, attributes: { ...TINY_SPEC.attributes, zip: { type: 'identifying' } } }),
    );
    const r = runCommand(() => evaluateCommand([ws.csv, '--spec', spec]));
    expect(r.stdout).toMatch(
      /caution: the table holds id and zip, columns the spec marks identifying \(a release drops them\)/,
    );
  });

  it('a released table, which lacks them, has no caution', async () => {
    const { releaseTo } = await import('../helpers/release.ts');
    const out = join(ws.dir, 'release');
    await releaseTo(ws.spec, out);
    const r = runCommand(() => evaluateCommand([out, '--spec', ws.spec, '--out', '-']));
    expect(r.stdout).not.toMatch(/cautions/);
  });
});
