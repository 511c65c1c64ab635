// Writes dist/ppdp.cache, V8's code cache for the bundled CLI, by running one release of the
// bundled Adult example with the cache writer on (see bin/ppdp.mjs). Part of `npm run build`.
// A failure here leaves the CLI working without a cache, so it warns instead of failing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'ppdp-code-cache-'));
try {
  const run = spawnSync(
    process.execPath,
    [
      join(root, 'bin/ppdp.mjs'),
      'release',
      join(root, 'examples/adult/release.json'),
      '--out',
      join(out, 'adult'),
      '--quiet',
    ],
    { env: { ...process.env, PPDP_WRITE_CODE_CACHE: '1' }, encoding: 'utf8' },
  );
  if (run.status !== 0) {
    process.stderr.write(`warning: no code cache written (the warm-up release failed):\n${run.stderr}`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
