import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ReleaseReport } from '../../src/contracts/report.ts';
import { readArrow } from '../../src/data/arrow.ts';
import { readCsv } from '../../src/data/csv.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const withoutTimings = (json: string) => {
  const report = JSON.parse(json) as ReleaseReport;
  return JSON.stringify({ ...report, timings: undefined });
};

describe('a release of the Adult example', async () => {
  const ws = adultWorkspace();
  const out = join(ws.dir, 'out', 'first');
  const { report, manifest } = await releaseTo(ws.spec, out);

  it('publishes the five files, manifest last, with matching hashes', () => {
    expect(ws.list('out/first')).toEqual([
      'data.arrow',
      'data.csv',
      'manifest.json',
      'report.html',
      'report.json',
    ]);
    expect(manifest.files.map((f) => f.name)).toEqual([
      'data.arrow',
      'data.csv',
      'report.html',
      'report.json',
    ]);
    const onDisk = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(onDisk).toEqual(manifest);
  });

  it('report.json carries the keys of the contract', () => {
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    for (const path of [
      'rows.input',
      'rows.released',
      'rows.suppressed',
      'generalization.node',
      'generalization.latticeSize',
      'generalization.nodesChecked',
      'privacy.satisfied',
      'privacy.k',
      'privacy.classes',
      'privacy.prosecutorRisk.max',
      'privacy.prosecutorRisk.mean',
      'utility.metric',
      'utility.value',
      'utility.ncp',
      'utility.discernibility',
      'utility.precision',
      'utility.aecs',
      'timings.search',
    ]) {
      expect(
        path.split('.').reduce((o, key) => o?.[key], json),
        path,
      ).toBeDefined();
    }
    expect(json.rows.input).toBe(30162);
    expect(json.generalization.latticeSize).toBe(4320);
    expect(Object.keys(json.generalization.node)).toHaveLength(8);
    expect(json.privacy.satisfied).toBe(true);
    expect(json.privacy.k).toBeGreaterThanOrEqual(5);
    expect(json.rows.suppressed).toBeLessThanOrEqual(Math.floor(0.02 * 30162));
    expect(json.verification.verified).toBe(true);
    expect(report.privacy.prosecutorRisk!.max).toBeLessThanOrEqual(1 / 5);
  });

  it('releases a k-anonymous table with every row and no identifying column', () => {
    const csv = readCsv(join(out, 'data.csv'));
    const arrow = readArrow(join(out, 'data.arrow'));
    expect(csv.rowCount).toBe(30162);
    expect(arrow.rowCount).toBe(30162);
    const qis = Object.keys(report.generalization!.node);
    const classes = new Map<string, number>();
    for (let r = 0; r < csv.rowCount; r++) {
      const key = qis
        .map(
          (q) =>
            csv.columns.find((c) => c.name === q)!.dictionary[
              csv.columns.find((c) => c.name === q)!.codes[r]!
            ],
        )
        .join('|');
      classes.set(key, (classes.get(key) ?? 0) + 1);
    }
    const suppressedKey = qis.map(() => '*').join('|');
    for (const [key, size] of classes) if (key !== suppressedKey) expect(size).toBeGreaterThanOrEqual(5);
  });

  it('is byte-identical when run again (timings aside), into the same or another folder', async () => {
    const again = join(ws.dir, 'out', 'second');
    await releaseTo(ws.spec, again);
    await releaseTo(ws.spec, out); // re-run into the published folder: idempotent
    // report.html and manifest.json embed the timings (the manifest through report.json's hash)
    for (const name of ['data.arrow', 'data.csv']) {
      expect(readFileSync(join(again, name)).equals(readFileSync(join(out, name))), name).toBe(true);
    }
    expect(withoutTimings(readFileSync(join(again, 'report.json'), 'utf8'))).toBe(
      withoutTimings(readFileSync(join(out, 'report.json'), 'utf8')),
    );
  });

  it('a re-run republishes a kept release whose file was changed in place, its size the same', async () => {
    const csv = join(out, 'data.csv');
    const published = readFileSync(csv);
    const bytes = Buffer.from(published);
    const at = bytes.length - 2;
    bytes[at] = bytes[at] === 0x30 ? 0x31 : 0x30;
    writeFileSync(csv, bytes);
    await releaseTo(ws.spec, out);
    expect(readFileSync(csv).equals(published)).toBe(true);
  });

  it('gives the same release with the plain-TS kernel', async () => {
    const viaTs = join(ws.dir, 'out', 'ts');
    await releaseTo(ws.spec, viaTs, { kernel: tsGroupingKernel });
    expect(readFileSync(join(viaTs, 'data.arrow')).equals(readFileSync(join(out, 'data.arrow')))).toBe(true);
  });

  it('shuffles rows: the release order is not the input order', () => {
    const input = readCsv(join(ws.dir, 'adult.csv'));
    const released = readCsv(join(out, 'data.csv'));
    const occ = (t: typeof input) => {
      const c = t.columns.find((x) => x.name === 'occupation')!;
      return Array.from(c.codes.subarray(0, 200), (code) => c.dictionary[code]);
    };
    expect(occ(released)).not.toEqual(occ(input));
  });
});
