/**
 * The `ppdp` command. Exit code 0 only on a verified, published release; errors go to stderr
 * with what went wrong, where, and how to fix it.
 */
import { parseArgs } from 'node:util';
import { PpdpError } from '../errors.ts';
import { tsGroupingKernel } from '../kernels/grouping-ts.ts';
import { wasmGroupingKernel } from '../kernels/grouping-wasm.ts';
import { runRelease, VERSION } from '../pipeline/release.ts';

const MAIN_HELP = `ppdp ${VERSION} — privacy-preserving microdata release

Usage:
  ppdp release <release.json> --out <dir>   build, verify and publish a release
  ppdp --help | ppdp <command> --help       help
  ppdp --version

A release spec names the input table, each column's role (identifying, quasi-identifying,
sensitive, insensitive) and hierarchy, the privacy models and the method. See
examples/adult/release.json and docs/release-spec.md.
`;

const RELEASE_HELP = `Usage: ppdp release <release.json> --out <dir> [options]

Builds the release the spec describes, re-verifies it with independent code, and publishes
data.arrow, data.csv, report.json, report.html and (last) manifest.json into <dir>.
Nothing is written to <dir> unless verification passes. Re-running is idempotent.

Options:
  --out <dir>        output folder (created if missing; must not be a file)   [required]
  --kernel <name>    grouping kernel: wasm (default) or ts (the plain-TS reference)
  --quiet            no progress lines on stderr
  -h, --help         this help

Example:
  ppdp release examples/adult/release.json --out out/adult
`;

export function main(argv: string[]): number {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(MAIN_HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  try {
    if (command === 'release') return release(rest);
    throw new PpdpError('E_USAGE', `unknown command '${command}'`, 'run `ppdp --help` for the commands');
  } catch (e) {
    return reportError(e);
  }
}

function release(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      kernel: { type: 'string', default: 'wasm' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(RELEASE_HELP);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new PpdpError(
      'E_USAGE',
      'ppdp release takes exactly one release spec',
      'ppdp release <release.json> --out <dir>',
    );
  }
  if (!values.out) throw new PpdpError('E_USAGE', 'ppdp release needs --out <dir>', 'e.g. --out out/adult');
  if (values.kernel !== 'wasm' && values.kernel !== 'ts') {
    throw new PpdpError(
      'E_USAGE',
      `--kernel must be wasm or ts (got '${values.kernel}')`,
      'omit it to use wasm',
    );
  }
  const started = performance.now();
  const progress = values.quiet
    ? undefined
    : (line: string) =>
        process.stderr.write(`ppdp [${((performance.now() - started) / 1000).toFixed(2)}s] ${line}\n`);
  const result = runRelease(positionals[0]!, values.out, {
    kernel: values.kernel === 'ts' ? tsGroupingKernel : wasmGroupingKernel,
    progress,
  });
  const { report } = result;
  process.stdout.write(
    `verified release in ${result.out}: ${report.privacy.k !== undefined ? `k = ${report.privacy.k}, ` : ''}` +
      `${report.rows.suppressed} rows suppressed, ${report.utility.metric} = ${report.utility.value.toPrecision(4)}\n`,
  );
  return 0;
}

function reportError(e: unknown): number {
  if (e instanceof PpdpError) {
    process.stderr.write(`ppdp: error: ${e.describe()}\n`);
    return 1;
  }
  if (e instanceof TypeError && (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`ppdp: error: ${e.message}\n  hint: run \`ppdp release --help\`\n`);
    return 2;
  }
  process.stderr.write(`ppdp: internal error: ${(e as Error).stack ?? String(e)}\n`);
  return 70;
}
