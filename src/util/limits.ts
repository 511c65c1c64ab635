/**
 * Limits checked at the door, before anything is sized from what an input or a spec declares:
 * shared by the spec's checks (src/release-spec/) and the readers (src/data/), which is why they live
 * below both. The budgets and the limits of the work itself are in src/data/limits.ts.
 */

/**
 * Columns of an input (a CSV header, an Arrow or Parquet schema) and attributes a spec lists:
 * a microdata table has tens to hundreds; every column costs its own dictionary and code array.
 */
export const MAX_INPUT_COLUMNS = 10_000;
/** Characters of a column name (in an input or a spec) and of any spec key. */
export const MAX_NAME_LENGTH = 1_000;
/** Bytes of a CSV header row: read whole before it is split (10,000 names of 1,000 characters fit in 40 MB, real ones in far less). */
export const MAX_CSV_HEADER_BYTES = 16 * 1024 * 1024;
/** Bytes of a spec file: settings, hierarchy builders and distortion matrices, read whole. */
export const MAX_SPEC_BYTES = 16 * 1024 * 1024;
/** Characters of a name echoed in a message or a report (longer ones are cut with an ellipsis). */
export const SHOWN_NAME_LENGTH = 200;
/** Smallest sampling fraction (report.population): one record in a billion. */
export const MIN_SAMPLING_FRACTION = 1e-9;
/** A name as messages and reports echo it: cut to SHOWN_NAME_LENGTH characters with an ellipsis. */
export function shownName(name: string): string {
  return name.length > SHOWN_NAME_LENGTH ? `${name.slice(0, SHOWN_NAME_LENGTH)}…` : name;
}
