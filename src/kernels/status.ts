/**
 * The kernels' status codes (status-codes.ts, shared with AssemblyScript) as typed errors:
 * a WASM kernel's status and the same refusal in the plain-TS reference raise the same
 * KernelError, with a code per status (`E_KERNEL_CODE_OUT_OF_DOMAIN`, …).
 */

import { KernelError } from '../errors.ts';
import { Status } from './status-codes.ts';

export { Status };

/** The error for `status`, from `kernel` (e.g. `grouping`), saying what was wrong. */
export function kernelError(kernel: string, status: Status, what: string): KernelError {
  const name = (Status[status] ?? 'Unknown').replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
  return new KernelError(`E_KERNEL_${name}`, status, `${kernel}: ${what}`);
}
