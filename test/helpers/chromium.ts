/** Headless Chromium for the page tests: its path, or null when it is not installed. */
import { spawnSync } from 'node:child_process';

export function findChromium(): string | null {
  for (const name of ['chromium', 'chromium-browser']) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim() !== '') return found.stdout.trim();
  }
  return null;
}
