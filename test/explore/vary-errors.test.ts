/**
 * Errors caused by --vary name the option and what the spec's models take: `--vary k` on a
 * randomization spec was blamed on the spec ("privacy[0] is k-anonymity", a model it does not
 * hold), `--vary k=1e3` on a small table on the spec's privacy[0].k.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PpdpError } from '../../src/errors.ts';
import { exploreFrontier, parseVary, specWith } from '../../src/explore/frontier.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { thrown as thrownOf } from '../helpers/thrown.ts';

const thrown = (work: () => unknown) => thrownOf(work, PpdpError);

const dir = mkdtempSync(join(tmpdir(), 'ppdp-vary-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(join(dir, 't.csv'), 'zip;sex;diagnosis\n1;m;a\n2;f;b\n3;m;a\n4;f;b\n');

function spec(name: string, privacy: unknown[], method: unknown) {
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      input: 't.csv',
      format: { delimiter: ';' },
      attributes: {
        zip: { type: 'quasi-identifying', hierarchy: { intervals: [2] } },
        sex: { type: 'quasi-identifying', hierarchy: { groups: [{ m: '*', f: '*' }] } },
        diagnosis: { type: 'sensitive' },
      },
      privacy,
      method,
      seed: 1,
    }),
  );
  return loadSpec(file);
}

describe('--vary errors', () => {
  it('--vary k on a randomization spec names the option and the parameters its models take', () => {
    const rho = spec('rho', [{ model: 'rho-privacy', attribute: 'diagnosis', rho1: 0.1, rho2: 0.5 }], {
      name: 'randomization',
      scenario: 'rr-s',
      form: 'uniform',
    });
    const e = thrown(() => specWith(rho, 'k', 2));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toMatch(/^--vary k: rho\.json's method is randomization/);
    expect(e.message).toContain("this spec's models (rho-privacy) have no parameter --vary changes");
    expect(e.message).not.toContain('privacy[0] is k-anonymity');

    const tau = spec('tau', [{ model: 'attribute-disclosure', attribute: 'diagnosis', tau: 0.5 }], {
      name: 'randomization',
      scenario: 'rr-s',
      form: 'uniform',
    });
    expect(thrown(() => specWith(tau, 'k', 2)).message).toContain(
      "this spec's models take tau (attribute-disclosure)",
    );
  });

  it("--vary k above the table's rows is the option's value, not the spec's", () => {
    const k = spec('k', [{ model: 'k-anonymity', k: 2 }], { name: 'generalization', maxSuppression: 0 });
    const e = thrown(() => exploreFrontier(k, readInput(k), parseVary('k=2,1e3'), wasmGroupingKernel));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toBe(
      "--vary k: 1000 is more than the table's 4 rows (k is at most the number of rows)",
    );
    expect(e.hint).toContain('--vary k=2..4');
  });

  it('--vary k with an entity column is capped at the persons, not the rows', () => {
    // 8 rows of 3 persons (`p1 ` is p1: ids are read without the blanks around them).
    writeFileSync(
      join(dir, 'orders.csv'),
      'customer;zip;sex\np1;1;m\np1 ;2;m\np1;3;m\np2;4;f\np2;1;f\np3;2;m\np3;3;f\np3;4;m\n',
    );
    const file = join(dir, 'entity.json');
    writeFileSync(
      file,
      JSON.stringify({
        input: 'orders.csv',
        format: { delimiter: ';' },
        attributes: {
          customer: { type: 'entity' },
          zip: { type: 'quasi-identifying', hierarchy: { intervals: [2] } },
          sex: { type: 'quasi-identifying', hierarchy: { groups: [{ m: '*', f: '*' }] } },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization', maxSuppression: 0 },
        seed: 1,
      }),
    );
    const s = loadSpec(file);
    const e = thrown(() => exploreFrontier(s, readInput(s), parseVary('k=2..5'), wasmGroupingKernel));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toBe(
      "--vary k: 4 and 5 are more than the table's 3 persons (attributes.customer is an entity column: k counts persons, and is at most their number)",
    );
    expect(e.hint).toContain('--vary k=2..3');
    const frontier = exploreFrontier(s, readInput(s), parseVary('k=2..3'), wasmGroupingKernel);
    expect(frontier.points.map((p) => p.feasible)).toEqual([true, true]);
  });

  it('--vary l without an l-diversity model names the option and what the spec takes', () => {
    const k = spec('k2', [{ model: 'k-anonymity', k: 2 }], { name: 'generalization', maxSuppression: 0 });
    const e = thrown(() => specWith(k, 'l', 2));
    expect(e.message).toMatch(/^--vary l: /);
    expect(e.message).toContain(
      "this spec's models take k (k-anonymity) and maxSuppression (generalization)",
    );
  });
});
