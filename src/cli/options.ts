/** Options the explore, evaluate and apply commands share. */
import { PpdpError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import { tsGroupingKernel } from '../kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../kernels/groupby/wasm.ts';

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
  return (line) =>
    process.stderr.write(`ppdp [${((performance.now() - started) / 1000).toFixed(2)}s] ${line}\n`);
}
