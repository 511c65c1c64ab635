/**
 * What an input's bytes are, whatever it claims: `|` delimits as `;`, `,` and tab do.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

describe('"|" as the delimiter', () => {
  it('is detected, and releases what the same table with ";" does, written with "|"', async () => {
    const ws = adultWorkspace(120);
    const semicolon = ws.read('adult.csv');
    ws.write('pipe.csv', semicolon.replaceAll(';', '|'));
    const attributes = adultAttributes(semicolon);
    const outs: string[] = [];
    for (const [input, format] of [
      ['adult.csv', {}],
      ['pipe.csv', {}],
      ['pipe.csv', { delimiter: '|' }],
    ] as const) {
      ws.write(
        'release.json',
        JSON.stringify({
          input,
          format,
          attributes,
          privacy: [{ model: 'k-anonymity', k: 2 }],
          method: { name: 'generalization', maxSuppression: 0.1 },
          seed: 1,
        }),
      );
      const { report, out } = await releaseTo(ws.spec, join(ws.dir, 'out', `${outs.length}`));
      expect(report.verification.verified).toBe(true);
      outs.push(out);
    }
    const released = readFileSync(join(outs[0]!, 'data.csv'), 'utf8');
    for (const out of outs.slice(1)) {
      expect(readFileSync(join(out, 'data.arrow')).equals(readFileSync(join(outs[0]!, 'data.arrow')))).toBe(
        true,
      );
      expect(readFileSync(join(out, 'data.csv'), 'utf8')).toBe(released.replaceAll(';', '|'));
    }
  }, 60_000);
});

/** Adult's columns: sex, age and race quasi-identifying (masked), the others released as they are. */
function adultAttributes(csv: string): Record<string, unknown> {
  const mask = { type: 'quasi-identifying', hierarchy: { mask: 'right' } };
  const names = csv.slice(0, csv.indexOf('\n')).split(';');
  return Object.fromEntries(
    names.map((name) => [name, ['sex', 'age', 'race'].includes(name) ? mask : { type: 'insensitive' }]),
  );
}
