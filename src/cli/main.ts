/**
 * The `ppdp` command. Exit code 0 only on a verified, published release; errors go to stderr
 * with what went wrong, where, and how to fix it.
 */

import { MEMORY_ENV } from '../data/limits.ts';
import { PpdpError } from '../errors.ts';
import { tsGroupingKernel } from '../kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../kernels/groupby/wasm.ts';
import { removeOnSignals } from '../pipeline/cleanup.ts';
import { type EngineName, executeRelease } from '../pipeline/engine.ts';
import { VERSION } from '../pipeline/release.ts';
import { checkStoreUrl, urlScheme } from '../pipeline/storage/index.ts';
import { cautionLines } from '../report/audit.ts';
import { printable } from '../util/format.ts';
import { nearest } from '../util/nearest.ts';
import { INITIAL_HEAP_MB } from './allocator.ts';
import { applyCommand } from './apply.ts';
import { commandArgs } from './args.ts';
import { evaluateCommand } from './evaluate.ts';
import { exploreCommand } from './explore.ts';
import { hierarchyCommand } from './hierarchy.ts';
import { initCommand } from './init.ts';
import { RELEASE_OPTIONS, tunedRestart } from './launch.ts';
import { progressLines, shardsOption } from './options.ts';
import { reconstructCommand } from './reconstruct.ts';
import { kSummary, suppressedSummary } from './summary.ts';

const MAIN_HELP = `ppdp ${VERSION} — privacy-preserving microdata release

Usage:
  ppdp release <release.json> --out <dir>   build, verify and publish a release
  ppdp release <release.json> --store s3://bucket/prefix [--endpoint URL]
                                            the same, publishing to releases/<name>/<runId>/
  ppdp reconstruct <release-dir> --attributes a,b [--out file]
                                            estimate a contingency table from a randomized release
  ppdp explore <release.json> --vary k=2..50 [--vary …] [--out dir]
                                            the frontier over one or two parameters, the lattice (explore.html)
  ppdp evaluate <data|release-dir> --spec <release.json>
                                            risk and utility of a table, from ppdp or another tool
  ppdp apply <release-dir> <release.json> --out <dir>
                                            re-apply a release's transformation to new data (or --node)
  ppdp hierarchy [check] …                  write built hierarchies as ARX CSVs, or check one against data
  ppdp init <table> [--out release.json]    draft a spec: roles and hierarchy builders guessed
  ppdp --help | ppdp <command> --help       help
  ppdp --version

A release spec names the input table, each column's role (identifying, quasi-identifying,
sensitive, insensitive) and hierarchy, the privacy models and the method. See
examples/adult/release.json and docs/release-spec.md.
`;

const RELEASE_HELP = `Usage: ppdp release <release.json> --out <dir> [options]

Builds the release the spec describes, re-verifies it with independent code, and publishes
data.arrow, data.csv, report.json, report.html and (last) manifest.json into <dir>.
Nothing is written to <dir> unless verification passes. Re-running is idempotent: a <dir>
that already holds the complete release of the same spec, input and hierarchy files is left
as it is.

<dir> belongs to the release: it must be new, empty, or hold an earlier ppdp release (its
manifest.json), which the new release replaces whole (files the new manifest does not list
are removed; manifest.json is removed first and written last). A folder holding anything
else is refused, and so is one inside another release's folder or holding the spec or a file
it names. One run at a time publishes into a folder: while a run holds
<dir>/.ppdp-lock, another fails at once (the lock of a crashed run on this machine is taken
over; after a crash elsewhere, remove the lock by hand).

Temporary files (the work area in $TMPDIR) are removed however the run ends (with --store,
the work area's copies of the rows go when the run ends; its plan and logs stay); on SIGINT,
SIGTERM or SIGHUP ppdp removes them (with --store, those copies too), the files a publish
under way had copied into <dir> and its lock there (and <dir> itself when the run made it and
it holds nothing else) and exits with 130, 143 or 129, publishing nothing. A signal that
arrives once manifest.json is being written does not stop the run: the release is published,
and the run finishes and exits 0 (a second signal exits at once, 0 if manifest.json is written).

The release runs through ppdp's state machine (plan → shards → merge → verify → publish),
executed in this process; the same definition runs on AWS Step Functions (docs/deploy.md).
On Linux, a local input of 64 MB or more runs in a child process started with glibc's
allocator tuned for it (GLIBC_TUNABLES: freed memory kept, huge pages from 256 MB) and V8's
heap sized for it (node --initial-heap-size=${INITIAL_HEAP_MB}); signals reach it and its exit code is the
command's. Set GLIBC_TUNABLES yourself to run otherwise (and node's --initial-heap-size to
size the heap yourself).

Options:
  --out <dir>        output folder: new, empty or an earlier release (created if missing)
  --store <url>      instead of --out: a store root, s3://bucket/prefix or a folder; the work
                     files go to <store>/work/<name>/<runId>/ and the release to
                     <store>/releases/<name>/<runId>/ (<release.json> may be s3://… too)
  --endpoint <url>   S3-compatible server for s3:// URLs (e.g. http://127.0.0.1:4568);
                     refused when the spec, --out and --store are all local
  --engine <name>    local (default: the state machine in-process) or direct (the same
                     states called in order, no state machine)
  --shards <n>       row shards to fan out over (default: one per 1,000,000 rows)
  --kernel <name>    grouping kernel: wasm (default) or ts (the plain-TS reference)
  --workers <n>      worker threads for the shard and part states of large inputs
                     (default: the cores, at most 4; 0 runs everything in one thread)
  --max-memory <MB>  memory budget: an input that will not fit fails before work starts
                     (overrides the spec's limits.maxMemoryMB; default: the machine's memory)
  --quiet            no progress lines on stderr
  -h, --help         this help

Example:
  ppdp release examples/adult/release.json --out out/adult
`;

export function main(argv: string[]): number | Promise<number> {
  ignoreClosedReaders();
  const [command, ...rest] = argv;
  // `ppdp help release` is `ppdp release --help`.
  if (command === 'help' && rest.length > 0) return main([rest[0]!, '--help']);
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(MAIN_HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  try {
    if (command === 'apply') removeOnSignals(); // release installs it once it runs in this process
    if (command === 'release') return release(rest).catch(reportError);
    if (command === 'reconstruct') return reconstructCommand(rest);
    if (command === 'explore') return exploreCommand(rest).catch(reportError);
    if (command === 'apply') return applyCommand(rest).catch(reportError);
    if (command === 'evaluate') return evaluateCommand(rest);
    if (command === 'hierarchy') return hierarchyCommand(rest);
    if (command === 'init') return initCommand(rest);
    throw unknownCommand(command);
  } catch (e) {
    return reportError(e);
  }
}

let readersGuarded = false;

/**
 * A reader that goes away early (`ppdp release … | head -1`) is no failure of the command:
 * what it no longer reads is dropped, and the exit code stays the command's own (0 for a
 * published release), where the write's EPIPE would otherwise crash ppdp.
 */
function ignoreClosedReaders(): void {
  if (readersGuarded) return;
  readersGuarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
    });
  }
}

/** The commands are the ones MAIN_HELP lists (`  ppdp <command> …`), so a new command's help line is enough. */
function unknownCommand(command: string): PpdpError {
  const commands = [...new Set([...MAIN_HELP.matchAll(/^ {2}ppdp ([a-z][a-z-]*)/gm)].map((m) => m[1]!))];
  const near = nearest(command, commands);
  return new PpdpError(
    'E_USAGE',
    `unknown command '${command}'${near ? ` (did you mean ${near}?)` : ''}`,
    `${near ? `write ppdp ${near} …, or run` : 'run'} \`ppdp --help\` for the commands (${commands.join(', ')})`,
  );
}

async function release(args: string[]): Promise<number> {
  const parsed = commandArgs('release', args, RELEASE_OPTIONS, {
    help: RELEASE_HELP,
    takes: 'exactly one release spec',
    synopsis: 'ppdp release <release.json> --out <dir>',
  });
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const target = releaseTarget(values);
  checkStoreUrl(positionals[0]!);
  // Given with local paths only, --endpoint would be ignored in silence: the user expected a bucket.
  if (
    values.endpoint !== undefined &&
    ![positionals[0], values.out, values.store].some((u) => u !== undefined && urlScheme(u) === 's3')
  ) {
    throw new PpdpError(
      'E_USAGE',
      `--endpoint ${values.endpoint}: the spec and ${values.out !== undefined ? '--out' : '--store'} are local, and --endpoint only applies to s3:// locations`,
      'drop --endpoint, or give an s3:// location (e.g. --store s3://bucket/prefix)',
    );
  }
  setMemoryBudget(values['max-memory']);
  if (values.kernel !== 'wasm' && values.kernel !== 'ts') {
    throw new PpdpError(
      'E_USAGE',
      `--kernel must be wasm or ts (got '${values.kernel}')`,
      'omit it to use wasm',
    );
  }
  // Run by bin/ppdp.mjs before the bundle loads; here for a caller of main() itself.
  const restart = tunedRestart(args);
  if (restart) return restart;
  removeOnSignals();
  const progress = progressLines(values.quiet);
  const result = await executeRelease(
    { spec: positionals[0]!, ...target, ...(values.shards ? { shards: Number(values.shards) } : {}) },
    {
      engine: values.engine as EngineName,
      kernel: values.kernel === 'ts' ? tsGroupingKernel : wasmGroupingKernel,
      ...(values.workers !== undefined ? { workers: workerCount(values.workers) } : {}),
      progress,
      ...(values.endpoint ? { s3: { endpoint: values.endpoint } } : {}),
    },
  );
  const { report } = result;
  const where = values.out ?? result.release;
  process.stdout.write(
    `verified release in ${where}: ${kSummary(report)}` +
      `${suppressedSummary(report)}, ${report.utility.metric} = ${report.utility.value.toPrecision(4)}\n`,
  );
  // The amber verdict's causes (report.json "verdict"): verified, but read these before publishing.
  process.stdout.write(cautionLines(report));
  return 0;
}

/** --out <dir> or --store <url> (exactly one), and the engine options, checked. */
function releaseTarget(values: {
  out?: string;
  store?: string;
  endpoint?: string;
  engine?: string;
  shards?: string;
}): { out?: string; store?: string } {
  if (values.out && values.store) {
    throw new PpdpError('E_USAGE', 'ppdp release takes --out or --store, not both', 'e.g. --out out/adult');
  }
  if (!values.out && !values.store) {
    throw new PpdpError(
      'E_USAGE',
      'ppdp release needs --out <dir>',
      'e.g. --out out/adult (or --store s3://bucket/prefix)',
    );
  }
  if (values.engine !== 'local' && values.engine !== 'direct') {
    throw new PpdpError(
      'E_USAGE',
      `--engine must be local or direct (got '${values.engine}')`,
      'omit it to use local',
    );
  }
  if (values.shards !== undefined) shardsOption(values.shards);
  if (values.endpoint !== undefined && !/^https?:\/\//.test(values.endpoint)) {
    throw new PpdpError(
      'E_USAGE',
      `--endpoint must be an http(s) URL (got '${values.endpoint}')`,
      'e.g. --endpoint http://127.0.0.1:4568',
    );
  }
  for (const [option, url] of [
    ['--out', values.out],
    ['--store', values.store],
  ] as const)
    if (url !== undefined) checkStoreUrl(url, `${option} ${url}`);
  return values.out ? { out: values.out } : { store: values.store! };
}

/** `--max-memory <MB>` reaches the input check (src/data/limits.ts) through the environment. */
function setMemoryBudget(value: string | undefined): void {
  if (value === undefined) return;
  const mb = Number(value);
  if (!(Number.isFinite(mb) && mb >= 1)) {
    throw new PpdpError(
      'E_USAGE',
      `--max-memory must be a number of MB ≥ 1 (got '${value}')`,
      'e.g. --max-memory 2048',
    );
  }
  process.env[MEMORY_ENV] = String(mb);
}

function reportError(e: unknown): number {
  if (e instanceof PpdpError) {
    process.stderr.write(`ppdp: error: ${e.describe(printable)}\n`);
    return e.code === 'E_ARGS' ? 2 : 1; // a command line parseArgs rejects: 2, as before
  }
  if (e instanceof TypeError && (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`ppdp: error: ${e.message}\n  hint: run \`ppdp release --help\`\n`);
    return 2;
  }
  process.stderr.write(`ppdp: internal error: ${(e as Error).stack ?? String(e)}\n`);
  return 70;
}

function workerCount(text: string): number {
  const n = Number(text);
  if (!(Number.isInteger(n) && n >= 0 && n <= 64)) {
    throw new PpdpError(
      'E_USAGE',
      `--workers must be a whole number from 0 to 64 (got '${text}')`,
      'e.g. --workers 2',
    );
  }
  return n;
}
