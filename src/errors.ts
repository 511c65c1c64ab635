/**
 * Typed errors. Every error ppdp raises for bad input names where the problem is (file, row,
 * column or spec field) and how to fix it — and never quotes a data value of a sensitive or
 * identifying column.
 */
export class PpdpError extends Error {
  /** Stable machine-readable code, e.g. `E_SPEC`, `E_CSV_RAGGED`. */
  readonly code: string;
  /** One sentence telling the user how to fix it. */
  readonly hint: string | undefined;

  constructor(code: string, message: string, hint?: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.hint = hint;
  }

  /**
   * The message with its hint, as shown to a person; `show` formats each (a terminal's escapes
   * the control characters a name from a spec, a file or a header may hold).
   */
  describe(show: (text: string) => string = (text) => text): string {
    const message = show(this.message);
    return this.hint ? `${message}\n  hint: ${show(this.hint)}` : message;
  }
}

/** The release spec is malformed or contradictory. */
export class SpecError extends PpdpError {}
/** An input table (CSV, Arrow, Parquet or Excel) cannot be read or is malformed. */
export class InputError extends PpdpError {}
/** A hierarchy file or builder is malformed or does not cover the data. */
export class HierarchyError extends PpdpError {}
/** No transformation satisfies the privacy models. */
export class NoSolutionError extends PpdpError {}
/** The independent verifier rejected a release: nothing is published. */
export class VerificationError extends PpdpError {}
/** Writing or publishing the release failed. */
export class OutputError extends PpdpError {}
/**
 * The work would exceed a resource limit (memory budget, lattice size, hierarchy size): raised
 * before the work starts, instead of a hang or an out-of-memory crash.
 */
export class LimitError extends PpdpError {}
/**
 * A kernel refused its input: a WASM kernel's status, or the same check in its plain-TS
 * reference or before either runs (src/kernels/status.ts). The pipeline validates what it
 * hands the kernels, so this names a defect in ppdp, never a data value.
 */
export class KernelError extends PpdpError {
  /** The kernel's status (src/kernels/status-codes.ts). */
  readonly status: number;

  constructor(code: string, status: number, message: string) {
    super(
      code,
      message,
      'this is a defect in ppdp, not in the data: report it with the spec and the command',
    );
    this.status = status;
  }
}
