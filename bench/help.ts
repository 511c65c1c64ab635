/**
 * `--help` for the benchmark scripts that have no usage text of their own: the script's opening
 * comment, which says what it measures, how to run it and where its figures go.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Prints the opening comment of the script at `moduleUrl` and exits, when asked for help. */
export function helpIfAsked(moduleUrl: string): void {
  const args = process.argv.slice(2);
  if (!(args.includes('--help') || args.includes('-h'))) return;
  process.stdout.write(openingComment(readFileSync(fileURLToPath(moduleUrl), 'utf8')));
  process.exit(0);
}

/** The first `/** … *\/` comment of a source text, without its markers. */
export function openingComment(source: string): string {
  const match = /\/\*\*\n([\s\S]*?)\n \*\//.exec(source);
  if (!match) throw new Error('the script has no opening comment to show as its help');
  return `${match[1]!
    .split('\n')
    .map((line) => line.replace(/^ \* ?/, ''))
    .join('\n')}\n`;
}
