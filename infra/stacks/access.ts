/**
 * What each Task's function may touch in the three buckets: the keys it reads, writes and
 * deletes, as IAM object patterns. The work area's keys are those of
 * src/pipeline/states/work.ts under `work/<name>/<runId>/`; the shards of the input's rows
 * (`rows/<piece>/<i>.arrow`) are read only by the states that need the rows themselves, and the
 * input's files in the inbox only by Plan (the spec, the first file's header, the digest) and
 * by the scan.
 */
import type { TaskName } from '../../src/pipeline/definition.ts';
import { LOCK, MANIFEST } from '../../src/pipeline/publish.ts';

/** A role's objects in one bucket: key patterns (`*` spans any characters, `/` included). */
export interface KeyAccess {
  readonly read?: readonly string[];
  readonly write?: readonly string[];
  readonly delete?: readonly string[];
}

export type Area = 'inbox' | 'work' | 'releases';

/** A run's work area, as a pattern: `work/<name>/<runId>/`. */
const RUN = 'work/*/';
/** The input's row shards, its pieces' code maps and its dictionaries (the values without the rows). */
export const ROWS = `${RUN}rows/*`;
export const DICTIONARIES = `${RUN}rows/dictionaries.arrow`;
/** The pieces' code maps (Combine's), local code → input code per column. */
export const CODE_MAPS = `${RUN}rows/*/codes.bin`;
/** The row shards a scan writes, `rows/<piece>/<i>.arrow` (not the dictionaries nor the code maps). */
export const SHARD_FILES = `${RUN}rows/*/*.arrow`;
/** A release folder's lock and its takeover marks (src/pipeline/publish.ts). */
export const LOCKS = `releases/*/${LOCK}*`;
/** Where a release's failure is recorded for its users (src/pipeline/states/report-failure.ts). */
export const FAILURES = 'releases/*/error.json';

const run = (...keys: string[]) => keys.map((k) => RUN + k);
/** What every state after Plan reads first (openWork): the plan and the spec's bundle. */
const OPENED = run('plan.json', 'bundle/*');

/** Per Task, per bucket: exactly the keys its state reads, writes and deletes. */
export const ACCESS: Record<TaskName, Partial<Record<Area, KeyAccess>>> = {
  Plan: {
    inbox: { read: ['inbox/*'] },
    work: {
      // The run lock (src/pipeline/lock.ts) and a failure recorded after it.
      read: run('lock.json', 'error.json'),
      write: run('lock.json', 'bundle/*', 'pieces.json', 'plan.json', 'timings/*'),
      delete: run('lock.json'),
    },
    // The release folder's check (a ppdp manifest or lock) and its lock.
    releases: { read: [`releases/*/${MANIFEST}`, LOCKS], write: [LOCKS], delete: [LOCKS] },
  },
  ScanPiece: {
    // Its piece of the input (a file Plan listed), and the shards it writes of it.
    inbox: { read: ['inbox/*'] },
    work: { read: OPENED, write: [SHARD_FILES, ...run('scan/*', 'timings/*')] },
  },
  Combine: {
    work: {
      read: [...OPENED, ...run('scan/*')],
      write: [DICTIONARIES, CODE_MAPS, ...run('shards.json', 'parts.json', 'plan.json', 'timings/*')],
    },
  },
  CountShard: {
    work: { read: [...OPENED, ROWS], write: run('counts/*', 'timings/*') },
  },
  Search: {
    work: {
      read: [...OPENED, DICTIONARIES, ...run('counts/*.bin')],
      write: run('flags/*', 'search.json', 'timings/*'),
    },
  },
  ApplyShard: {
    // Beside the search (RouteShard), a shard's bytes split by output part into route/.
    work: {
      read: [...OPENED, ROWS, ...run('counts/*.rows', 'flags/*', 'search.json')],
      write: run('scatter/*', 'route/*', 'timings/*'),
    },
  },
  Assemble: {
    // The part's pieces, and its bytes as RouteShard split them.
    work: { read: [...OPENED, ...run('scatter/*', 'route/*')], write: run('staging/*', 'timings/*') },
  },
  VerifySlice: {
    // An input shard's slice reads its rows and their bytes' hashes (which HashShard, beside
    // the search, took from the rows' bytes); an output part's slice the staged part.
    work: {
      read: [...OPENED, ROWS, ...run('search.json', 'staging/*', 'verify/bytes-*')],
      write: run('verify/*', 'timings/*'),
    },
  },
  Audit: {
    // The staged parts' Arrow files and the input's values (not its rows); the scans' summaries
    // and the pieces' pass-through values as hashes (their distinct values are counted here, in
    // a first phase beside the search, into distinct.json).
    work: {
      read: [
        ...OPENED,
        DICTIONARIES,
        ...run(
          'staging/data.arrow',
          'staging/data/*.arrow',
          'scan/*.json',
          'scan/*.distinct',
          'distinct.json',
        ),
      ],
      write: run('audit.json', 'distinct.json', 'timings/*'),
    },
  },
  Build: {
    work: {
      read: [...OPENED, ROWS],
      write: run('staging/*', 'built.json', 'staging.json', 'timings/*'),
    },
  },
  Verify: {
    // Sharded, Verify reads the dictionaries only; a single-task method's verifier re-reads
    // the whole input (src/pipeline/states/verify.ts, verifyWhole), hence the rows.
    work: {
      read: [
        ...OPENED,
        ROWS,
        ...run(
          'search.json',
          'built.json',
          'staging.json',
          'verify/*',
          'staging/*',
          'audit.json',
          'scan/*.json',
          'timings/*',
        ),
      ],
      write: run('staging/*', 'verified.json', 'timings/*'),
    },
  },
  Publish: {
    work: { read: [...OPENED, ...run('verified.json', 'staging/*')] },
    releases: { read: ['releases/*'], write: ['releases/*'], delete: ['releases/*'] },
  },
  ReportFailure: {
    work: { write: run('error.json') },
    releases: { read: [LOCKS], write: [LOCKS, FAILURES], delete: [LOCKS] },
  },
};

/** What the Distributed Maps' ItemReader reads (the state machine's own role). */
export const MAP_ITEMS: readonly string[] = run('pieces.json', 'shards.json', 'parts.json');

/** Why a pattern is a wildcard, for the cdk-nag acknowledgement of each one. */
export function wildcardReason(pattern: string): string {
  if (pattern === ROWS) return "the input's row shards of any run: only the states that read rows";
  if (pattern === CODE_MAPS) return "the input pieces' code maps of any run: only Combine writes them";
  if (pattern === SHARD_FILES) return "the row shards of any run's input pieces: only the scan writes them";
  if (pattern === LOCKS) return "release folders' locks only: keys depend on the release name and run id";
  if (pattern === FAILURES) return "a release's failure record only: its key depends on the release name";
  if (pattern === 'inbox/*') return 'specs and inputs under inbox/ only: keys depend on the release name';
  if (pattern === 'releases/*')
    return 'release folders under releases/ only: keys depend on the release name and run id';
  return `${pattern.slice(RUN.length)} of a run's work area only: keys depend on the release name and run id`;
}
