/**
 * Parquet output (`output.formats` listing "parquet"): data.parquet beside data.arrow and
 * data.csv — the same rows, deterministic bytes, listed in the manifest with its SHA-256 and
 * checked by the verifier — in one part, in several parts, and built as one task; an edited
 * data.parquet is refused. (The verifier's own Parquet check: test/verify/generalization.test.ts.)
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readArrow } from '../../src/data/arrow.ts';
import { readParquet } from '../../src/data/parquet.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import type { SpecError } from '../../src/errors.ts';
import { generalizationMethod } from '../../src/methods/generalization/index.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { type StoreError, storeResolver } from '../../src/pipeline/storage/index.ts';
import { parseSpec } from '../../src/release-spec/spec.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const WITH_PARQUET = { formats: ['arrow', 'csv', 'parquet'] };

/** A table's rows as strings, in order. */
const rowsOf = (t: EncodedTable) =>
  Array.from({ length: t.rowCount }, (_, r) =>
    t.columns.map((c) => c.dictionary[c.codes[r]!]).join('\u0000'),
  );

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function expectListed(out: string, manifest: { files: { name: string; sha256: string }[] }, names: string[]) {
  for (const name of names) {
    const entry = manifest.files.find((f) => f.name === name);
    expect(entry, name).toBeDefined();
    expect(entry!.sha256, name).toBe(sha256(join(out, name)));
  }
}

describe('Parquet output', () => {
  it('writes data.parquet holding data.arrow’s rows, the same bytes on every run, listed and verified; the other files unchanged', async () => {
    const ws = adultWorkspace(3000);
    const plain = join(ws.dir, 'out', 'plain');
    await executeRelease({ spec: ws.spec, out: plain, shards: 2 });
    expect(readdirSync(plain)).not.toContain('data.parquet');
    ws.editSpec((s) => {
      s.output = WITH_PARQUET;
    });
    const outs = [join(ws.dir, 'out', 'a'), join(ws.dir, 'out', 'b')];
    for (const [i, out] of outs.entries()) {
      const { report, manifest } = await executeRelease({ spec: ws.spec, out, shards: i + 2 });
      expect(report.verification.verified).toBe(true);
      expect(report.verification.checks.find((c) => c.name === 'parquet-equals-arrow')).toMatchObject({
        passed: true,
        detail: 'data.parquet and data.arrow hold the same rows',
      });
      expectListed(out, manifest, ['data.parquet', 'data.arrow', 'data.csv']);
      expect(rowsOf(readParquet(join(out, 'data.parquet')))).toEqual(
        rowsOf(readArrow(join(out, 'data.arrow'))),
      );
      for (const name of ['data.arrow', 'data.csv'])
        expect(readFileSync(join(out, name)).equals(readFileSync(join(plain, name))), name).toBe(true);
    }
    expect(
      readFileSync(join(outs[1]!, 'data.parquet')).equals(readFileSync(join(outs[0]!, 'data.parquet'))),
    ).toBe(true);
    // Built as one task (as `ppdp apply` builds it): the same file, checked by the whole verifier.
    const single = join(ws.dir, 'out', 'single');
    const { report, manifest } = await executeRelease(
      { spec: ws.spec, out: single },
      { method: generalizationMethod },
    );
    expect(report.verification.checks.find((c) => c.name === 'parquet-equals-arrow')?.passed).toBe(true);
    expectListed(single, manifest, ['data.parquet']);
    expect(
      readFileSync(join(single, 'data.parquet')).equals(readFileSync(join(outs[0]!, 'data.parquet'))),
    ).toBe(true);
  });

  it('writes a Parquet file per output part, each listed and checked against its Arrow file', async () => {
    const ws = adultWorkspace(3000);
    ws.editSpec((s) => {
      s.output = WITH_PARQUET;
    });
    const out = join(ws.dir, 'out', 'parts');
    const { report, manifest, plan } = await executeRelease({
      spec: ws.spec,
      out,
      shards: 2,
      rowsPerPart: 1000,
    });
    expect(plan.parts).toBe(3);
    expect(report.verification.checks.find((c) => c.name === 'parquet-equals-arrow')).toMatchObject({
      passed: true,
      detail: "each of the 3 parts' Parquet and Arrow files hold the same rows",
    });
    const parquets = readdirSync(join(out, 'data')).filter((n) => n.endsWith('.parquet'));
    expect(parquets).toHaveLength(3);
    expectListed(
      out,
      manifest,
      parquets.map((n) => `data/${n}`),
    );
    for (const n of parquets)
      expect(rowsOf(readParquet(join(out, 'data', n)))).toEqual(
        rowsOf(readArrow(join(out, 'data', n.replace(/\.parquet$/, '.arrow')))),
      );
  });

  it('a data.parquet edited after it was written is refused: before its check and after it, nothing published', async () => {
    const ws = adultWorkspace(1200);
    ws.editSpec((s) => {
      s.output = WITH_PARQUET;
    });
    const stores = storeResolver({});
    try {
      // Two bytes swapped in the staged file (same size), when `state` starts or once it ended.
      const editing =
        (state: string, after: boolean) =>
        (s: string, handler: (input: unknown) => Promise<unknown>) =>
        async (input: unknown) => {
          const edit = async () => {
            if (s !== state) return;
            const work = await stores.open((input as { work: string }).work);
            const key = `${work.key.replace(/\/?$/, '/')}staging/data.parquet`;
            const bytes = Buffer.from(await work.store.get(key));
            const i = Math.floor(bytes.length / 2);
            const j = bytes.findIndex((b, at) => at > i && b !== bytes[i]);
            [bytes[i], bytes[j]] = [bytes[j]!, bytes[i]!];
            await work.store.put(key, bytes);
          };
          if (!after) await edit();
          const output = await handler(input);
          if (after) await edit();
          return output;
        };
      for (const [state, after, code] of [
        ['Assemble', true, 'E_WORK_CORRUPT'],
        ['Publish', false, 'E_PUBLISH_MISMATCH'],
      ] as const) {
        const out = join(ws.dir, 'out', state);
        const error = await executeRelease(
          { spec: ws.spec, out, shards: 2 },
          { wrap: editing(state, after) },
        ).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect((error as StoreError).code, state).toBe(code);
        expect((error as Error).message, state).toMatch(/data\.parquet/);
        expect(existsSync(join(out, 'manifest.json')), state).toBe(false);
      }
    } finally {
      stores.close();
    }
  });

  it('refuses formats without Arrow and CSV, unknown or repeated formats, and Parquet from a method that does not write it', () => {
    const ws = adultWorkspace(10);
    const spec = JSON.parse(ws.read('release.json'));
    const code = (output: unknown, method = spec.method) => {
      try {
        parseSpec({ ...spec, output, method }, ws.spec);
        return 'accepted';
      } catch (e) {
        return (e as SpecError).code;
      }
    };
    expect(code(WITH_PARQUET)).toBe('accepted');
    expect(code({ formats: ['csv', 'arrow'] })).toBe('accepted');
    expect(code({ formats: ['arrow', 'parquet'] })).toBe('E_SPEC_OUTPUT');
    expect(code({ formats: ['arrow', 'csv', 'xlsx'] })).toBe('E_SPEC_OUTPUT');
    expect(code({ formats: ['arrow', 'csv', 'csv'] })).toBe('E_SPEC_OUTPUT');
    expect(code({ formats: ['arrow', 'csv', 'parquet'] }, { name: 'mondrian' })).toBe('E_SPEC_OUTPUT');
    expect(code({})).toMatch(/^E_SPEC/);
    expect(code({ formats: ['arrow', 'csv'], other: 1 })).toMatch(/^E_SPEC/);
  });
});
