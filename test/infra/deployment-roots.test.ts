/**
 * The deployment's settings for where work files and releases go (PPDP_WORK_ROOT,
 * PPDP_RELEASE_ROOT, set by the stack): Plan and ReportFailure put them there when set, and
 * under the request's one store root (the CLI's --store) when not.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { ROOT_ENV, storeRootOf } from '../../src/pipeline/states/plan.ts';
import { reportFailure } from '../../src/pipeline/states/report-failure.ts';
import { storeResolver } from '../../src/pipeline/storage/index.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

afterEach(() => {
  delete process.env[ROOT_ENV.work];
  delete process.env[ROOT_ENV.releases];
});

function roots() {
  const dir = mkdtempSync(join(tmpdir(), 'ppdp-roots-'));
  process.env[ROOT_ENV.work] = `file://${dir}/w`;
  process.env[ROOT_ENV.releases] = `file://${dir}/r/`;
  return dir;
}

describe('where work files and releases go', () => {
  it('is one root without the deployment settings, and the settings when given', () => {
    const spec = 's3://inbox-bucket/inbox/adult/release.json';
    for (const area of ['work', 'releases'] as const) {
      expect(storeRootOf({ spec }, area)).toBe('s3://inbox-bucket/');
      expect(storeRootOf({ spec, store: 's3://b/p' }, area)).toBe('s3://b/p/');
    }
    process.env[ROOT_ENV.work] = 's3://work-bucket';
    process.env[ROOT_ENV.releases] = 's3://release-bucket/';
    expect(storeRootOf({ spec }, 'work')).toBe('s3://work-bucket/');
    expect(storeRootOf({ spec }, 'releases')).toBe('s3://release-bucket/');
  });

  it('Plan and Publish put the work area and the release under their own roots', async () => {
    const dir = roots();
    const ws = adultWorkspace(200);
    try {
      const { manifest } = await executeRelease({ spec: ws.spec, store: `file://${ws.dir}/` });
      // The release is named after the spec's folder (it is not under inbox/).
      const name = basename(ws.dir);
      expect(readdirSync(join(dir, 'w', 'work', name))).toEqual([manifest.runId]);
      // The work area is there (the run's copies of the rows gone once it ended).
      expect(existsSync(join(dir, 'w', 'work', name, manifest.runId, 'plan.json'))).toBe(true);
      expect(existsSync(join(dir, 'w', 'work', name, manifest.runId, 'rows', '0', '0.arrow'))).toBe(false);
      expect(existsSync(join(dir, 'r', 'releases', name, manifest.runId, 'manifest.json'))).toBe(true);
      // Nothing under the request's store.
      expect(ws.list('work')).toBeNull();
      expect(ws.list('releases')).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('ReportFailure records a failure before any run in the work root and for users in the release root', async () => {
    const dir = roots();
    try {
      const out = await reportFailure(
        {
          spec: `file://${dir}/in/inbox/broken/release.json`,
          error: { Error: 'SpecError', Cause: '{"errorMessage":"bad","code":"E_SPEC"}' },
        },
        { stores: storeResolver(), kernel: undefined as never, log: () => {} },
      );
      expect(out.reported).toBe(`file:///${dir.slice(1)}/w/work/broken/failed/error.json`);
      const forUsers = JSON.parse(readFileSync(join(dir, 'r', 'releases', 'broken', 'error.json'), 'utf8'));
      expect(forUsers).toMatchObject({ error: 'SpecError', code: 'E_SPEC', runId: null });
      expect(existsSync(join(dir, 'in'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
