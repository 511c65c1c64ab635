/** Headless Chromium for the page tests: its path, or null when it is not installed (or PPDP_CHROMIUM=none). */
import { spawnSync } from 'node:child_process';

export function findChromium(): string | null {
  // PPDP_CHROMIUM=none hides an installed Chromium (to try the suites' skip); a path picks one.
  const chosen = process.env.PPDP_CHROMIUM;
  if (chosen !== undefined && chosen !== '') return chosen === 'none' ? null : chosen;
  for (const name of ['chromium', 'chromium-browser']) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (found.status === 0 && found.stdout.trim() !== '') return found.stdout.trim();
  }
  return null;
}

/** Text that `chromium --dump-dom` printed inside an element, its entities decoded. */
export function decodeEntities(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}
