/** The commands of docs/decide-and-reuse.md run as written (needs `npm run build`). */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const doc = readFileSync(join(ROOT, 'docs/decide-and-reuse.md'), 'utf8');
const commands = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)]
  // A block that writes a file with a here-document runs whole, in test/docs/docs.test.ts.
  .filter((m) => !m[1]!.includes('<<'))
  .flatMap((m) => m[1]!.trim().split('\n'))
  // Mondrian's frontier builds a release per value (minutes here): test/decide covers that path.
  .filter((line) => !line.includes('adult-mondrian'));
const out = mkdtempSync(join(tmpdir(), 'ppdp-decide-doc-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('docs/decide-and-reuse.md', () => {
  it('has the examples of the three commands', () => {
    for (const command of ['explore', 'evaluate', 'apply']) {
      expect(
        commands.some((c) => c.startsWith(`npx ppdp ${command} `)),
        command,
      ).toBe(true);
    }
  });

  it.each(commands)('%s', (line) => {
    // Each `&&`-joined command as written, with out/ in a temporary folder.
    for (const part of line.split(' && ')) {
      const [tool, ...args] = part.replaceAll('out/', `${out}/`).split(' ');
      const argv =
        tool === 'npx' ? [process.execPath, [join(ROOT, 'bin/ppdp.mjs'), ...args.slice(1)]] : [tool!, args];
      const r = spawnSync(argv[0] as string, argv[1] as string[], { cwd: ROOT, encoding: 'utf8' });
      expect(r.status, `${part}\n${r.stderr}`).toBe(0);
    }
  });
});
