/**
 * What the `ppdp` command decides before the CLI's bundle loads (bin/ppdp.mjs loads this small
 * bundle, dist/launch.cjs, first): a large release restarts at once with the tuned allocator,
 * without first loading the whole CLI only to start it again.
 */
import { parseArgs } from 'node:util';
import { LARGE_INPUT_BYTES } from '../data/limits.ts';
import { rerunWithTunedAllocator, TUNED_RERUN_NOTE, tunedAllocatorFor } from './allocator.ts';

/** The options of `ppdp release`. */
export const RELEASE_OPTIONS = {
  out: { type: 'string' },
  store: { type: 'string' },
  endpoint: { type: 'string' },
  engine: { type: 'string', default: 'local' },
  shards: { type: 'string' },
  kernel: { type: 'string', default: 'wasm' },
  workers: { type: 'string' },
  'max-memory': { type: 'string' },
  quiet: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/**
 * For `ppdp release <args>` of a large local input (see tunedAllocatorFor): says so and runs
 * the release in a child process with the tuned allocator. Anything else, arguments that do not
 * parse among them, answers undefined: the CLI then runs, and reports what is wrong itself.
 */
export function tunedRestart(args: readonly string[]): Promise<never> | undefined {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof RELEASE_OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...args], options: RELEASE_OPTIONS, allowPositionals: true });
  } catch {
    return undefined;
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length !== 1) return undefined;
  const tunables = tunedAllocatorFor(positionals[0]!, LARGE_INPUT_BYTES);
  if (tunables === undefined) return undefined;
  if (!values.quiet) process.stderr.write(`ppdp: ${TUNED_RERUN_NOTE}\n`);
  return rerunWithTunedAllocator(tunables);
}
