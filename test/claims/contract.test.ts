/**
 * The claims contract (src/claims/): claims read back from the work area are checked against
 * their method's shape and the contract's version before any verifier reads them; a wrong
 * version, another method's claims, a missing, mistyped or unknown field is an error naming
 * where the claims were read and the field. In the pipeline, the Verify state refuses such
 * claims from built.json and nothing is published. Methods and verifiers meet only in the
 * contract: neither imports the other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAIMS_FORMAT, type Claims, claimsOf, readClaims } from '../../src/claims/index.ts';
import { VerificationError } from '../../src/errors.ts';
import { methodFor } from '../../src/methods/registry.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const anatomy = claimsOf('anatomy', {
  enforced: { sensitive: 'occupation', model: 'distinct-l-diversity', l: 3 },
  buckets: 2,
  bucketOfRow: [1, 2, 1, 2, 1, 2],
});

/** `claims` as JSON with `edit` applied. */
function edited(claims: Claims, edit: (json: Record<string, unknown>) => void): unknown {
  const json = JSON.parse(JSON.stringify(claims)) as Record<string, unknown>;
  edit(json);
  return json;
}

/**
 * Claims naming another format or method come from another version; claims naming this one's
 * were written by this version, so a field that does not fit is its bug.
 */
const ANOTHER_VERSION =
  /written by another version of ppdp or changed after it was written: run the release again/;
const OWN_BUG = /^this version of ppdp wrote these claims, so this is a bug in ppdp/;

function refused(
  json: unknown,
  message: RegExp,
  method: Claims['method'] = 'anatomy',
  hint: RegExp = OWN_BUG,
): void {
  let error: unknown;
  try {
    readClaims(json, method, 'built.json');
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(VerificationError);
  expect((error as VerificationError).code).toBe('E_CLAIMS');
  expect((error as Error).message).toMatch(/claims in built\.json are not ppdp-claims\/1 claims/);
  expect((error as Error).message).toMatch(message);
  expect((error as VerificationError).hint).toMatch(hint);
}

describe('readClaims', () => {
  it('reads claims as written and read back as JSON', () => {
    expect(anatomy.format).toBe(CLAIMS_FORMAT);
    expect(readClaims(JSON.parse(JSON.stringify(anatomy)), 'anatomy')).toEqual(anatomy);
  });

  it('refuses another version, no version, another method or no object', () => {
    refused(
      edited(anatomy, (j) => {
        j.format = 'ppdp-claims/0';
      }),
      /'format' is "ppdp-claims\/0", expected 'ppdp-claims\/1'/,
      'anatomy',
      ANOTHER_VERSION,
    );
    refused(
      edited(anatomy, (j) => {
        delete j.format;
      }),
      /'format' is missing/,
      'anatomy',
      ANOTHER_VERSION,
    );
    refused(anatomy, /'method' is "anatomy", expected 'slicing'/, 'slicing', ANOTHER_VERSION);
    refused([anatomy], /not an object/, 'anatomy', ANOTHER_VERSION);
    refused(null, /not an object/, 'anatomy', ANOTHER_VERSION);
  });

  it('refuses a missing, mistyped or unknown field, naming it', () => {
    refused(
      edited(anatomy, (j) => {
        delete (j.enforced as Record<string, unknown>).l;
      }),
      /'enforced\.l' must be a finite number/,
    );
    refused(
      edited(anatomy, (j) => {
        j.bucketOfRow = [1, -1];
      }),
      /'bucketOfRow' must be a list of non-negative integers/,
    );
    refused(
      edited(anatomy, (j) => {
        j.buckets = '2';
      }),
      /'buckets' must be a non-negative integer/,
    );
    refused(
      edited(anatomy, (j) => {
        (j.enforced as Record<string, unknown>).k = 5;
      }),
      /unknown field 'enforced\.k'/,
    );
    refused(
      edited(anatomy, (j) => {
        j.enforced = null;
      }),
      /'enforced' must be an object/,
    );
  });

  it('blames this version, not another, for a claim that is not a finite number', () => {
    // NaN and ±Infinity are written to built.json as null.
    const mondrian = claimsOf('mondrian', {
      classes: 5,
      minClassSize: 2,
      ncp: Number.POSITIVE_INFINITY,
      numeric: ['x'],
      generalized: ['sex'],
    });
    refused(JSON.parse(JSON.stringify(mondrian)), /'ncp' must be a finite number/, 'mondrian');
  });

  it('reads null requirements where the contract allows them, and only there', () => {
    const randomization = claimsOf('randomization', {
      enforced: { sensitive: 'occupation', tau: null, rho: { rho1: 0.1, rho2: 0.5 } },
      maxRisk: 0.2,
      meanRisk: 0.1,
    });
    expect(readClaims(randomization, 'randomization')).toEqual(randomization);
    refused(
      edited(randomization, (j) => {
        j.maxRisk = null;
      }),
      /'maxRisk' must be a finite number/,
      'randomization',
    );
  });
});

describe('the Verify state reads the claims through the contract', () => {
  /** A release whose method states its claims through `change`. */
  const run = async (change: (claims: Claims) => unknown) => {
    const ws = adultWorkspace(600);
    // The synchronous build only: its claims are the ones changed (buildAsync would bypass it).
    const { buildAsync: _async, ...method } = methodFor('generalization');
    const out = `${ws.dir}/out`;
    const error = await executeRelease(
      { spec: ws.spec, out },
      {
        method: {
          ...method,
          build(ctx) {
            const built = method.build(ctx);
            return { ...built, claims: change(built.claims) as Claims };
          },
        },
      },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error: error as VerificationError, published: ws.list('out') };
  };

  it('passes the method’s own claims', async () => {
    const { error, published } = await run((c) => c);
    expect(error).toBeUndefined();
    expect(published).toContain('manifest.json');
  });

  it('refuses claims of another version from built.json: nothing published', async () => {
    const { error, published } = await run((c) => ({ ...c, format: 'ppdp-claims/0' }));
    expect(error).toBeInstanceOf(VerificationError);
    expect(error.code).toBe('E_CLAIMS');
    expect(error.message).toMatch(/generalization method's claims in built\.json/);
    expect(published ?? []).not.toContain('manifest.json');
  });

  it('refuses claims that understate the suppression limit: nothing published', async () => {
    const { error, published } = await run((c) =>
      edited(c, (j) => {
        (j.enforced as Record<string, number>).maxSuppressedRows += 100;
      }),
    );
    expect(error).toBeInstanceOf(VerificationError);
    expect(error.message).toMatch(
      /requirements-as-spec \(the claims state maxSuppressedRows = \d+, the spec requires/,
    );
    expect(published ?? []).not.toContain('manifest.json');
  });
});

describe('the dependency direction', () => {
  const SRC = resolve(import.meta.dirname, '../../src');
  /** The src/ folders a folder's modules import from (relative imports only). */
  const importedFolders = (folder: string): Set<string> => {
    const found = new Set<string>();
    const files = readdirSync(join(SRC, folder), { recursive: true }) as string[];
    for (const file of files.filter((f) => f.endsWith('.ts'))) {
      const path = join(SRC, folder, file);
      for (const [, target] of readFileSync(path, 'utf8').matchAll(
        /^(?:import|export)[^;]*? from '(\.[^']+)'/gms,
      ))
        found.add(relative(SRC, resolve(dirname(path), target!)).split('/')[0]!);
    }
    return found;
  };

  it('methods and verifiers import the claims contract, never each other', () => {
    expect(importedFolders('methods')).toContain('claims');
    expect(importedFolders('methods')).not.toContain('verify');
    expect(importedFolders('verify')).toContain('claims');
    expect(importedFolders('verify')).not.toContain('methods');
    for (const f of ['methods', 'verify', 'pipeline']) expect(importedFolders('claims')).not.toContain(f);
  });
});
