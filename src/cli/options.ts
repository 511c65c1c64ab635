/** Options the explore, evaluate and apply commands share. */
import { PpdpError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import { tsGroupingKernel } from '../kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../kernels/groupby/wasm.ts';
import { MAX_SHARDS } from '../pipeline/states/types.ts';
import { printable, thousands } from '../util/format.ts';

/** `--kernel wasm|ts`: the grouping kernel. */
export function groupingKernelOption(value: string | undefined): GroupingKernel {
  if (value !== 'wasm' && value !== 'ts') {
    throw new PpdpError('E_USAGE', `--kernel must be wasm or ts (got '${value}')`, 'omit it to use wasm');
  }
  return value === 'ts' ? tsGroupingKernel : wasmGroupingKernel;
}

/** Progress lines on stderr with the seconds since the command started; none with --quiet. */
export function progressLines(quiet: boolean | undefined): ((line: string) => void) | undefined {
  if (quiet) return undefined;
  const started = performance.now();
  // A line may quote a name from a spec or a file: its control characters are escaped.
  return (line) =>
    process.stderr.write(`ppdp [${((performance.now() - started) / 1000).toFixed(2)}s] ${printable(line)}\n`);
}

/**
 * `--shards <n>`: a whole number from 1 to MAX_SHARDS, checked before any work (the input is
 * not read to count its rows for a count that would be refused anyway).
 */
export function shardsOption(value: string): number {
  const n = Number(value);
  if (!(/^\s*\d+\s*$/.test(value) && Number.isSafeInteger(n) && n >= 1 && n <= MAX_SHARDS)) {
    throw new PpdpError(
      'E_USAGE',
      `--shards must be a whole number from 1 to ${thousands(MAX_SHARDS)} (got '${value.length > 40 ? `${value.slice(0, 40)}…` : value}')`,
      'e.g. --shards 4',
    );
  }
  return n;
}
