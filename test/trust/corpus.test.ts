/**
 * The bad-input corpus (test/fixtures/bad/, built by its generate.ts): every case is the small
 * base release with some files broken. Each must fail with its own specific error — the class,
 * the code, a message naming the file and row/column or setting, a hint — that never quotes a
 * planted identifying or sensitive value, and leave --out as it was; through the library and
 * through the CLI. The `ok-` cases are odd but acceptable inputs that must release.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as errors from '../../src/errors.ts';
import type { CaseSpec } from '../fixtures/bad/generate.ts';
import { releaseTo } from '../helpers/release.ts';
import { listFiles, MARKER, runCli, snapshot, trustedRelease, withEnv, writeResults } from './helpers.ts';

const CORPUS = new URL('../fixtures/bad/', import.meta.url).pathname;
const BASE = join(CORPUS, '_base');

const cases = readdirSync(CORPUS, { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== '_base')
  .map((e) => ({
    name: e.name,
    spec: JSON.parse(readFileSync(join(CORPUS, e.name, 'case.json'), 'utf8')) as CaseSpec,
  }));

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

interface Outcome {
  case: string;
  title: string;
  expected: string;
  library: string;
  cli: string;
}
const outcomes: Outcome[] = [];
afterAll(() => {
  const errorsOnly = outcomes.filter((o) => o.expected !== 'release');
  writeResults('corpus', {
    summary: {
      cases: outcomes.length,
      errorCases: errorsOnly.length,
      acceptedCases: outcomes.length - errorsOnly.length,
      distinctCodes: new Set(errorsOnly.map((o) => o.expected)).size,
      allAsExpected: outcomes.every((o) => o.library === o.expected && o.cli === o.expected),
    },
    cases: outcomes,
  });
});

/** A fresh copy of the base with the case's files over it: `<root>/ws/`, --out `<root>/out`. */
function workspace(name: string, c: CaseSpec): { ws: string; spec: string; out: string } {
  const root = mkdtempSync(join(tmpdir(), `ppdp-corpus-${name}-`));
  made.push(root);
  const ws = join(root, 'ws');
  cpSync(BASE, ws, { recursive: true });
  if (name !== '_base') cpSync(join(CORPUS, name), ws, { recursive: true });
  for (const file of c.remove ?? []) rmSync(join(ws, file));
  return { ws, spec: join(ws, c.spec ?? 'release.json'), out: resolve(ws, c.out ?? '../out') };
}

async function library(spec: string, out: string): Promise<unknown> {
  try {
    await releaseTo(spec, out);
    return undefined;
  } catch (e) {
    return e;
  }
}

describe('the base of the corpus releases', () => {
  it('with k = 2, every identifying value dropped', async () => {
    const { spec, out } = workspace('_base', { title: 'base', expect: 'release' });
    const { report } = await releaseTo(spec, out);
    expect(report.verification.verified).toBe(true);
    expect(trustedRelease(out)).not.toBeNull();
    for (const f of listFiles(out)) expect(readFileSync(join(out, f), 'latin1')).not.toContain('SECRET-ID');
  });
});

describe('bad-input corpus', () => {
  it('has at least 30 error cases, each with its own expectation', () => {
    const errorCases = cases.filter((c) => c.spec.expect !== 'release');
    expect(errorCases.length).toBeGreaterThanOrEqual(30);
    for (const c of errorCases) {
      expect(c.spec.code, c.name).toMatch(/^E_[A-Z_]+$/);
      expect(c.spec.message, c.name).toBeTruthy();
    }
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (name, { spec: c }) => {
    const { ws, spec, out } = workspace(name, c);
    const before = snapshot(out);
    const inputBefore = snapshot(ws);
    const error = await withEnv(c.env, () => library(spec, out));
    const outcome: Outcome = {
      case: name,
      title: c.title,
      expected: c.code ?? 'release',
      library: '',
      cli: '',
    };
    outcomes.push(outcome);

    if (c.expect === 'release') {
      expect(error, String((error as Error)?.message)).toBeUndefined();
      outcome.library = 'release';
      expect(trustedRelease(out)).not.toBeNull();
      for (const f of listFiles(out)) expect(readFileSync(join(out, f), 'latin1')).not.toContain('SECRET-ID');
    } else {
      const ErrorClass = (errors as unknown as Record<string, typeof errors.PpdpError>)[c.expect];
      expect(ErrorClass, `error class ${c.expect}`).toBeDefined();
      expect(error, `${name}: ${String(error)}`).toBeInstanceOf(ErrorClass);
      const e = error as errors.PpdpError;
      outcome.library = e.code;
      expect(e.code).toBe(c.code);
      expect(e.message).toMatch(new RegExp(c.message!));
      expect(e.hint, 'every error says how to fix it').toBeTruthy();
      if (c.hint) expect(e.hint).toContain(c.hint);
      expect(e.describe(), 'no planted identifying or sensitive value').not.toContain(MARKER);
      expect(snapshot(out), '--out is left as it was').toEqual(before);
    }
    expect(snapshot(ws), 'the input folder is never written').toEqual(inputBefore);

    // The same through the CLI (its own engine): exit code, the error on stderr, no marker.
    const cliOut = c.out === undefined ? `${out}-cli` : out;
    const cliBefore = snapshot(cliOut);
    const cli = await withEnv(c.env, () => runCli(['release', spec, '--out', cliOut]));
    expect(cli.stderr + cli.stdout, 'CLI output quotes no planted value').not.toContain(MARKER);
    if (c.expect === 'release') {
      expect(cli.status, cli.stderr).toBe(0);
      expect(trustedRelease(cliOut)).not.toBeNull();
      outcome.cli = 'release';
    } else {
      expect(cli.status, cli.stderr).toBe(1);
      const shown = /^ppdp: error: ([\s\S]*?)\n {2}hint: /m.exec(cli.stderr);
      expect(shown, cli.stderr).not.toBeNull();
      expect(shown![1]).toMatch(new RegExp(c.message!));
      outcome.cli = c.code!;
      expect(snapshot(cliOut), '--out is left as it was').toEqual(cliBefore);
      expect(existsSync(join(cliOut, 'manifest.json'))).toBe(false);
    }
  });
});
