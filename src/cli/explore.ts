/**
 * `ppdp explore <release.json> --vary k=2..50 [--out dir]`: the privacy/utility frontier of a
 * spec over one parameter, without publishing any data (src/explore/).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PpdpError } from '../errors.ts';
import { exploreFrontier, parseVary } from '../explore/frontier.ts';
import { frontierCsv, frontierHtml, frontierJson } from '../explore/render.ts';
import { checkOutDir } from '../pipeline/publish.ts';
import { readInput } from '../pipeline/release.ts';
import { loadSpec, withColumnDefaults } from '../spec/spec.ts';
import { parseCommandArgs } from './args.ts';
import { groupingKernelOption, progressLines } from './options.ts';

export const EXPLORE_HELP = `Usage: ppdp explore <release.json> --vary <parameter>=<range> [options]

Runs the spec's method for each value of one privacy parameter — the search only, nothing is
published — and writes the privacy/utility frontier: per value the chosen transformation
(generalization: the lattice node), the classes, the k achieved, suppressed rows, utility
measures (NCP, discernibility, …) and the maximum prosecutor risk. The input is read once.

Options:
  --vary <p>=<range>  k=2..50, l=2..6, t=0.1..0.5:0.05, delta=1..3:0.5, tau=0.1..0.5:0.05 (or τ),
                      or a list: k=2,5,10. Integer ranges step by 1 unless ':step' is given.
                      k changes the k-anonymity model (added if the spec has none); l, t,
                      delta and tau change the spec's l-diversity, t-closeness, δ-disclosure
                      or attribute-disclosure model.                             [required]
  --out <dir>         where frontier.json, frontier.csv and frontier.html go (default: frontier)
  --kernel <name>     grouping kernel: wasm (default) or ts (the plain-TS reference)
  --quiet             no progress lines on stderr
  -h, --help          this help

Example:
  ppdp explore examples/adult/release.json --vary k=2..50 --out out/frontier
`;

export function exploreCommand(args: string[]): number {
  const { values, positionals } = parseCommandArgs('explore', {
    args,
    allowPositionals: true,
    options: {
      vary: { type: 'string' },
      out: { type: 'string', default: 'frontier' },
      kernel: { type: 'string', default: 'wasm' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(EXPLORE_HELP);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new PpdpError(
      'E_USAGE',
      'ppdp explore takes exactly one release spec',
      'ppdp explore <release.json> --vary k=2..50',
    );
  }
  if (!values.vary) throw new PpdpError('E_USAGE', 'ppdp explore needs --vary', 'e.g. --vary k=2..50');
  const kernel = groupingKernelOption(values.kernel);
  const vary = parseVary(values.vary);
  const out = values.out!;
  checkOutDir(out, []); // a folder, or none yet
  const say = progressLines(values.quiet) ?? (() => {});
  const spec = loadSpec(positionals[0]!);
  say(`reading the input of ${positionals[0]}`);
  const table = readInput(spec);
  const frontier = exploreFrontier(withColumnDefaults(spec, table), table, vary, kernel, say);
  mkdirSync(out, { recursive: true });
  for (const [name, text] of [
    ['frontier.json', frontierJson(frontier)],
    ['frontier.csv', frontierCsv(frontier)],
    ['frontier.html', frontierHtml(frontier)],
  ] as const) {
    writeFileSync(join(out, `.${name}.partial`), text);
    renameSync(join(out, `.${name}.partial`), join(out, name));
  }
  const feasible = frontier.points.filter((p) => p.feasible).length;
  process.stdout.write(
    `frontier of ${vary.parameter} over ${frontier.points.length} values (${feasible} with a solution) in ${out}: frontier.json, frontier.csv, frontier.html\n`,
  );
  return 0;
}
