/**
 * A real `cdk synth` of infra/, offline (../shared/docs/STACK-NOTES.md): the app bundles the
 * handlers, builds the stack, runs cdk-nag, and writes a template.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const INFRA = new URL('../../infra/', import.meta.url).pathname;

describe('cdk synth', () => {
  it('synthesizes the stack offline with cdk-nag clean', { timeout: 300_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'ppdp-cdk-out-'));
    try {
      const r = spawnSync(
        'npx',
        [
          'cdk',
          'synth',
          '--no-notices',
          '--quiet',
          '--output',
          out,
          '-c',
          'ppdp:schedules=[{"name":"adult","expression":"cron(0 3 ? * MON *)"}]',
        ],
        {
          cwd: INFRA,
          encoding: 'utf8',
          timeout: 280_000,
          env: {
            ...process.env,
            CDK_DEFAULT_ACCOUNT: '111111111111',
            CDK_DEFAULT_REGION: 'us-east-1',
            AWS_EC2_METADATA_DISABLED: 'true',
            CDK_DISABLE_CLI_TELEMETRY: 'true',
          },
        },
      );
      expect(r.stderr.replace(/npm warn.*\n/g, '')).not.toMatch(/ERROR|AwsSolutions-/);
      expect(r.status).toBe(0);
      const template = JSON.parse(readFileSync(join(out, 'Ppdp.template.json'), 'utf8'));
      const types = Object.values(template.Resources as Record<string, { Type: string }>).map((x) => x.Type);
      for (const t of [
        'AWS::S3::Bucket',
        'AWS::StepFunctions::StateMachine',
        'AWS::Events::Rule',
        'AWS::Scheduler::Schedule',
      ]) {
        expect(types, t).toContain(t);
      }
      expect(types.filter((t) => t === 'AWS::Lambda::Function').length).toBeGreaterThanOrEqual(9);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
