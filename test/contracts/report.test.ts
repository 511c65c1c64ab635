import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readSavedRelease } from '../../src/apply/apply.ts';
import { readReleasedTable } from '../../src/cli/released-table.ts';
import { REPORT_FORMAT, type ReleaseReport, readReport, reportProblem } from '../../src/contracts/report.ts';
import { PpdpError } from '../../src/errors.ts';
import { releaseTo } from '../helpers/release.ts';

const HOSPITAL = new URL('../../examples/hospital/release.json', import.meta.url).pathname;

let out: string;
let report: ReleaseReport;

beforeAll(async () => {
  out = join(mkdtempSync(join(tmpdir(), 'ppdp-report-contract-')), 'release');
  ({ report } = await releaseTo(HOSPITAL, out));
}, 120_000);

/** The published report.json, changed by `edit`, with the manifest's hash of it updated. */
function rewriteReport(edit: (json: Record<string, unknown>) => void): void {
  const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  edit(json);
  const body = `${JSON.stringify(json, null, 2)}\n`;
  writeFileSync(join(out, 'report.json'), body);
  const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
  const entry = manifest.files.find((f: { name: string }) => f.name === 'report.json');
  entry.sha256 = createHash('sha256').update(body).digest('hex');
  entry.bytes = Buffer.byteLength(body);
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

const clone = (r: unknown) => JSON.parse(JSON.stringify(r));

describe('the report contract', () => {
  it('a release writes a report of its format, and it fits the declaration', () => {
    expect(report.format).toBe(REPORT_FORMAT);
    const onDisk = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(Object.keys(onDisk)[0]).toBe('format');
    expect(reportProblem(onDisk)).toBeUndefined();
    expect(readReport(onDisk, 'report.json')).toEqual(onDisk);
  });

  it('names the format it found and the one it expects', () => {
    const other = { ...clone(report), format: 'ppdp-report/0' };
    expect(() => readReport(other, 'old/report.json')).toThrow(
      /old\/report\.json is not a ppdp-report\/1 report: its 'format' is 'ppdp-report\/0', expected 'ppdp-report\/1'/,
    );
    const { format: _f, ...none } = clone(report);
    expect(reportProblem(none)).toMatch(/'format' is missing/);
    expect(reportProblem([report])).toMatch(/not a JSON object/);
  });

  it('names the first field out of shape, however deep', () => {
    const wrongType = clone(report);
    wrongType.privacy.models[0].satisfied = 'yes';
    expect(reportProblem(wrongType)).toBe("'privacy.models[0].satisfied' must be true or false");
    const unknown = clone(report);
    unknown.rows.extra = 1;
    expect(reportProblem(unknown)).toBe("unknown field 'rows.extra'");
    const negative = clone(report);
    negative.rows.released = -1;
    expect(reportProblem(negative)).toBe("'rows.released' must be a non-negative integer");
    const badVerdict = clone(report);
    badVerdict.verdict = { level: 'green', causes: [] };
    expect(reportProblem(badVerdict)).toMatch(
      /'verdict\.level' must be one of 'verified', 'caution', 'not-verified'/,
    );
    const missing = clone(report);
    delete missing.verification;
    expect(reportProblem(missing)).toBe("'verification' must be an object");
  });

  it('a utility measure may be any named number or string, nothing else', () => {
    const extra = clone(report);
    extra.utility.someMeasure = 0.5;
    expect(reportProblem(extra)).toBeUndefined();
    extra.utility.someMeasure = [1];
    expect(reportProblem(extra)).toBe("'utility.someMeasure' must be a finite number or a string");
  });

  it('apply and evaluate refuse a release whose report is of another format, naming it', () => {
    rewriteReport((json) => {
      json.format = 'ppdp-report/9';
    });
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as PpdpError;
      }
      throw new Error('not refused');
    };
    const byApply = refused(() => readSavedRelease(out));
    expect(byApply).toBeInstanceOf(PpdpError);
    expect(byApply.code).toBe('E_REPORT_FORMAT');
    expect(byApply.message).toContain(join(out, 'report.json'));
    expect(byApply.message).toContain("'ppdp-report/9'");
    const byEvaluate = refused(() => readReleasedTable(join(out, 'data.csv')));
    expect(byEvaluate.code).toBe('E_REPORT_FORMAT');
    rewriteReport((json) => {
      json.format = REPORT_FORMAT;
    });
    expect(readSavedRelease(out).report.format).toBe(REPORT_FORMAT);
  });
});
