// What a kernel returns when an input breaks its contract (0 or a count when all is well).
// Plain enum syntax, compiled by AssemblyScript (assembly/ imports it) and TypeScript alike:
// status.ts maps each member to a KernelError, which the plain-TS references throw too.
export enum Status {
  Ok = 0,
  /** A code or key outside its column's domain. */
  CodeOutOfDomain = -1,
  /** A class or source naming a tuple that is not there. */
  TupleOutOfRange = -2,
  /** A class id outside the map it is looked up in. */
  ClassOutOfMap = -3,
  /** Median bounds or target that do not fit the range of rows. */
  BadMedian = -4,
  /** A hierarchy level a dimension does not have. */
  MissingLevel = -5,
  /** Inputs whose sizes or structure disagree (checked before any kernel runs). */
  BadShape = -6,
  /** A session larger than one instance's memory can hold. */
  TooLarge = -7,
}
