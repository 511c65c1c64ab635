/**
 * Columns and values named like Object.prototype's members (`constructor`, `__proto__`,
 * `toString`, `hasOwnProperty`, `valueOf`) are ordinary names: every method releases and
 * verifies such a table, and report.json and matrices.json hold them as ordinary keys
 * (src/util/record.ts). Before, the audit's tallies read `contributions.constructor` as
 * Object and the report failed its own contract; randomization's verifier read
 * `attributes.constructor` and refused its own matrices.json; t-closeness's verifier counted
 * a value `constructor` as NaN.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { release } from '../../src/api.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'] as const;

const dir = mkdtempSync(join(tmpdir(), 'ppdp-proto-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// QIs constructor (numeric) and __proto__ (zip-like), sensitive toString, insensitive
// hasOwnProperty and valueOf; the sensitive and insensitive values are such names too.
{
  const rows = ['id,constructor,__proto__,toString,hasOwnProperty,valueOf'];
  for (let i = 0; i < 60; i++) {
    rows.push(
      `${i},${20 + (i % 30)},${47900 + (i % 12)},${[...NAMES, 'flu'][i % 6]},${[...NAMES, 'flu'][(i * 7) % 6]},${['a', 'b', 'constructor', '__proto__'][i % 4]}`,
    );
  }
  writeFileSync(join(dir, 't.csv'), `${rows.join('\n')}\n`);
}

function specFile(name: string, method: object, privacy: object[], hierarchies = true): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      input: 't.csv',
      attributes: keyed([
        ['id', { type: 'identifying' }],
        [
          'constructor',
          {
            type: 'quasi-identifying',
            scale: 'numeric',
            ...(hierarchies ? { hierarchy: { intervals: [5, 10, 20] } } : {}),
          },
        ],
        [
          '__proto__',
          { type: 'quasi-identifying', ...(hierarchies ? { hierarchy: { mask: 'right' } } : {}) },
        ],
        ['toString', { type: 'sensitive' }],
        ['hasOwnProperty', { type: 'insensitive' }],
        ['valueOf', { type: 'insensitive' }],
      ]),
      privacy,
      method,
      seed: 1,
    }),
  );
  return file;
}

/** An object with these keys as its own (a literal's `__proto__:` would set its prototype). */
const keyed = (entries: [string, unknown][]) => Object.fromEntries(entries);

const L2 = { model: 'distinct-l-diversity', attribute: 'toString', l: 2 };
const K3 = { model: 'k-anonymity', k: 3 };

/** Every key of a JSON text, at any depth (JSON.parse keeps `__proto__` as an own key). */
function keysOf(text: string): Set<string> {
  const keys = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        keys.add(k);
        walk(x);
      }
  };
  walk(JSON.parse(text));
  return keys;
}

type Report = Record<string, Record<string, unknown>>;

describe('columns and values named like Object.prototype members', () => {
  it('generalization (t-closeness, a loss weight for one QI, in shards): released, verified, the names as keys', async () => {
    const file = specFile(
      'gen',
      { name: 'generalization', metric: 'loss', loss: { weights: keyed([['__proto__', 0.5]]) } },
      [K3, { model: 't-closeness', attribute: 'toString', t: 0.5 }],
    );
    for (const shards of [1, 3]) {
      const out = join(dir, `gen-${shards}`);
      await release(file, { out, shards, engine: 'direct' });
      const text = readFileSync(join(out, 'report.json'), 'utf8');
      const report = JSON.parse(text) as Report;
      expect(Object.keys(report.generalization!.node as object).sort()).toEqual(['__proto__', 'constructor']);
      expect(report.audit!.linkage).toMatchObject({
        columns: ['hasOwnProperty', 'valueOf'],
        contributions: { hasOwnProperty: expect.any(Number), valueOf: expect.any(Number) },
      });
      expect(Object.keys((report.privacy!.disclosure ?? {}) as object)).toEqual(['toString']);
      for (const name of NAMES) expect(keysOf(text).has(name), name).toBe(true);
    }
  });

  it('Mondrian and Anatomy: released and verified', async () => {
    const mondrian = JSON.parse(
      readFileSync(
        join(await out('mon', specFile('mon', { name: 'mondrian' }, [K3, L2])), 'report.json'),
        'utf8',
      ),
    ) as Report;
    expect(Object.keys((mondrian.audit!.linkage as { contributions: object }).contributions).sort()).toEqual([
      'hasOwnProperty',
      'valueOf',
    ]);
    const anatomy = specFile('ana', { name: 'anatomy' }, [{ ...L2, l: 3 }], false);
    const report = JSON.parse(readFileSync(join(await out('ana', anatomy), 'report.json'), 'utf8')) as Report;
    expect(Object.keys(report.privacy!.disclosure as object)).toEqual(['toString']);
  });

  it('randomization (a retention for one attribute): matrices.json keyed by the names, verified', async () => {
    const file = specFile(
      'rnd',
      {
        name: 'randomization',
        scenario: 'rr-both',
        form: 'retention',
        retention: keyed([['__proto__', 0.7]]),
      },
      [{ model: 'attribute-disclosure', attribute: 'toString', tau: 0.5 }],
      false,
    );
    const folder = await out('rnd', file);
    const matrices = JSON.parse(readFileSync(join(folder, 'matrices.json'), 'utf8'));
    expect([...Object.keys(matrices.attributes), ...Object.keys(matrices.released)].sort()).toEqual([
      '__proto__',
      'constructor',
      'toString',
    ]);
    const own = (record: object, key: string) => Object.getOwnPropertyDescriptor(record, key)?.value;
    expect(own(matrices.attributes, '__proto__')).toMatchObject({
      retention: 0.7,
      chosenBy: 'spec retention',
    });
    expect(own(matrices.attributes, 'constructor').chosenBy).toEqual(expect.any(String));
    expect(keysOf(readFileSync(join(folder, 'report.json'), 'utf8')).has('__proto__')).toBe(true);
    // reconstruct reads matrices.json by those names (bundled CLI: needs `npm run build`)
    const r = spawnSync(
      process.execPath,
      [CLI, 'reconstruct', folder, '--attributes', 'constructor,valueOf', '--format', 'json'],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const attributes = JSON.parse(r.stdout).attributes as { name: string; randomized: boolean }[];
    expect(attributes.map((a) => [a.name, a.randomized])).toEqual([
      ['constructor', true],
      ['valueOf', false],
    ]);
  });

  it('evaluate: its JSON holds the names as keys (bundled CLI)', () => {
    const file = specFile('ev', { name: 'generalization' }, [K3, L2]);
    for (const args of [
      ['--spec', file],
      ['--qi', 'constructor,__proto__', '--sensitive', 'toString,valueOf'],
    ]) {
      const r = spawnSync(process.execPath, [CLI, 'evaluate', join(dir, 't.csv'), ...args, '--out', '-'], {
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).toBe(0);
      const evaluation = JSON.parse(r.stdout);
      expect(Object.keys(evaluation.disclosure)).toEqual(
        args[0] === '--spec' ? ['toString'] : ['toString', 'valueOf'],
      );
      if (args[0] === '--spec')
        expect(Object.keys(evaluation.utility.ncpByAttribute).sort()).toEqual(['__proto__', 'constructor']);
    }
  });
});

async function out(name: string, file: string): Promise<string> {
  const folder = join(dir, `out-${name}`);
  await release(file, { out: folder, engine: 'direct' });
  return folder;
}
