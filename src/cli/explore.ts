/**
 * `ppdp explore <release.json> --vary k=2..50 [--vary maxSuppression=0,0.05] [--out dir]`:
 * the privacy/utility frontier of a spec over one or two parameters and, for generalization,
 * its lattice, as an explorer page; nothing is published (src/explore/).
 */
import { basename, join } from 'node:path';
import { PpdpError } from '../errors.ts';
import { explore } from '../explore/explorer.ts';
import { parseVary } from '../explore/frontier.ts';
import { explorerHtml } from '../explore/page.ts';
import { frontierCsv, frontierJson } from '../explore/render.ts';
import { DEFAULT_REPEATS, drawsSample, MAX_REPEATS } from '../explore/repeats.ts';
import { withSearchBudget } from '../explore/search.ts';
import { serveExplorer } from '../explore/serve.ts';
import { checkFolderReplace, checkOut, fileHead, specReads, writeAtomically } from '../pipeline/out-path.ts';
import { readInput } from '../pipeline/release.ts';
import { checkSpecFiles, loadSpec, type ReleaseSpec, withColumnDefaults } from '../release-spec/spec.ts';
import { counted } from '../util/format.ts';
import { commandArgs } from './args.ts';
import { groupingKernelOption, progressLines } from './options.ts';

export const EXPLORE_HELP = `Usage: ppdp explore <release.json> --vary <parameter>=<range> [--vary …] [options]

Runs the spec's method for each value of one or two parameters — the search only, nothing is
published — and writes the privacy/utility frontier: per run the chosen transformation
(generalization: the lattice node), the classes, the k achieved, suppressed rows, utility
measures (NCP, discernibility, …) and the maximum prosecutor risk. For generalization the
page also shows the lattice, each node judged under the spec's own parameters. Pick any
solution or node in explore.html to see its utility, risk, disclosure and the command that
releases it. The page holds released rows of the spec's own choice only (its first 50): rows
of several choices could be joined into finer ones. The input is read once.

Options:
  --vary <p>=<range>  k=2..50, l=2..6, t=0.1..0.5:0.05, delta=1..3:0.5, tau=0.1..0.5:0.05 (or τ),
                      epsilon=0.5..3:0.5 (or ε; differential privacy),
                      maxSuppression=0,0.02,0.05 (generalization), or a list: k=2,5,10
                      (a value listed twice runs once, in the order first given).
                      Integer ranges step by 1 unless ':step' is given. k changes the
                      k-anonymity model (added if the spec has none, except for
                      randomization, which takes none; k at most the table's rows, or its
                      persons with an entity column); l, t, delta and tau
                      change the spec's l-diversity, t-closeness, δ-disclosure or
                      attribute-disclosure model; epsilon the differential-privacy model.
                      Give it twice for a grid.                                  [required]
  --repeats <n>       differential privacy: releases run per value (default ${DEFAULT_REPEATS}, at most
                      ${MAX_REPEATS}). Its release samples the input from a secret random stream, so
                      two releases of the same spec differ: the page shows each value's mean
                      and range over the runs (aggregates only, never a run's rows), for
                      choosing ε; none of the runs is published
  --out <dir>         where explore.html, frontier.json and frontier.csv go (default: frontier):
                      a new or empty folder, or one holding only an earlier exploration;
                      not a folder holding the spec or its files, nor inside a release folder
  --force             write into a folder holding other files, replacing any of those three
  --no-lattice        generalization: leave the lattice out (the sweep only)
  --node-budget <n>   generalization: the search's method.nodeBudget for this exploration (it
                      searches best-effort; the page draws its progress and how to continue it)
  --time-limit <s>    generalization: the search's method.timeLimit, likewise
  --serve             also serve explore.html on http://127.0.0.1 (a free port) until stopped,
                      only to requests for 127.0.0.1:<port> or localhost:<port>
  --kernel <name>     grouping kernel: wasm (default) or ts (the plain-TS reference)
  --quiet             no progress lines on stderr
  -h, --help          this help

Example:
  ppdp explore examples/adult/release.json --vary k=2..50 --out out/frontier
`;

export async function exploreCommand(args: string[]): Promise<number> {
  const parsed = commandArgs(
    'explore',
    args,
    {
      vary: { type: 'string', multiple: true },
      repeats: { type: 'string' },
      'no-lattice': { type: 'boolean', default: false },
      'node-budget': { type: 'string' },
      'time-limit': { type: 'string' },
      serve: { type: 'boolean', default: false },
      out: { type: 'string', default: 'frontier' },
      force: { type: 'boolean', default: false },
      kernel: { type: 'string', default: 'wasm' },
      quiet: { type: 'boolean', default: false },
    },
    {
      help: EXPLORE_HELP,
      takes: 'exactly one release spec',
      synopsis: 'ppdp explore <release.json> --vary k=2..50',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (!values.vary || values.vary.length === 0)
    throw new PpdpError('E_USAGE', 'ppdp explore needs --vary', 'e.g. --vary k=2..50');
  if (values.vary.length > 2) {
    throw new PpdpError(
      'E_USAGE',
      `ppdp explore: ${values.vary.length} --vary options, at most two`,
      'vary one parameter, or two for a grid (e.g. --vary k=2..20 --vary maxSuppression=0,0.05)',
    );
  }
  const kernel = groupingKernelOption(values.kernel);
  const varies = values.vary.map(parseVary);
  const out = values.out!;
  const say = progressLines(values.quiet) ?? (() => {});
  const spec = withSearchBudget(loadSpec(positionals[0]!), values['node-budget'], values['time-limit']);
  checkSpecFiles(spec);
  checkOut(out, specReads(spec), 'folder');
  checkFolderReplace(out, 'explore', values.force ?? false, EARLIER);
  const repeats = repeatsOption(values.repeats, spec);
  say(`reading the input of ${positionals[0]}`);
  const table = readInput(spec);
  const data = explore(withColumnDefaults(spec, table), table, varies, {
    specPath: positionals[0]!,
    kernel,
    progress: say,
    lattice: !values['no-lattice'],
    ...(repeats !== undefined ? { repeats } : {}),
  });
  const frontier = data.frontier;
  const page = explorerHtml(data);
  for (const [name, text] of [
    ['frontier.json', frontierJson(frontier)],
    ['frontier.csv', frontierCsv(frontier)],
    ['explore.html', page],
  ] as const)
    writeAtomically(join(out, name), text);
  const feasible = frontier.points.filter((p) => p.feasible).length;
  process.stdout.write(
    `frontier of ${frontier.parameters.join(' × ')} over ${counted(frontier.points.length, 'run')} (${feasible} with a solution) in ${out}: explore.html, frontier.json, frontier.csv\n`,
  );
  if (values.serve) {
    const url = await serveExplorer(page);
    process.stdout.write(`serving explore.html on ${url} (Ctrl-C stops)\n`);
    await new Promise(() => {}); // until the process is stopped
  }
  return 0;
}

/**
 * explore's files, each recognised by its first bytes as one it wrote (a re-run replaces them):
 * the frontier's JSON (spec, method, parameter first), its CSV (a header holding `feasible` and
 * ending in `ms`), the page (its title).
 */
const EARLIER: Record<string, (path: string) => boolean> = {
  'frontier.json': (path) =>
    /^\{\s*"spec":\s*"(?:[^"\\]|\\.)*",\s*"method":\s*"[^"]*",\s*"parameter":/.test(fileHead(path)),
  'frontier.csv': (path) => {
    const header = fileHead(path).split('\n', 1)[0]!.split(',');
    return header.includes('feasible') && header.at(-1) === 'ms';
  },
  'explore.html': (path) =>
    /^<!doctype html>\s*<html[^>]*><head>[\s\S]*?<title>ppdp explore — /.test(fileHead(path)),
};

/** `--repeats n`: a whole number from 1 to MAX_REPEATS, for a spec whose release draws a secret sample only. */
function repeatsOption(text: string | undefined, spec: ReleaseSpec): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_REPEATS)) {
    throw new PpdpError(
      'E_USAGE',
      `ppdp explore: --repeats must be a whole number from 1 to ${MAX_REPEATS}`,
      `e.g. --repeats ${DEFAULT_REPEATS}`,
    );
  }
  if (!drawsSample(spec)) {
    throw new PpdpError(
      'E_USAGE',
      `ppdp explore: --repeats applies to a release that draws a secret sample (differential privacy), and ${basename(spec.file)} has none`,
      'leave --repeats out: this spec releases the same rows for the same seed, so one run per value tells',
    );
  }
  return n;
}
