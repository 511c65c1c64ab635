/** Shared by the trust tests: what a reader trusts, result files, the CLI in-process. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';

/** Every planted identifying and sensitive value of the corpus contains this. */
export const MARKER = 'SECRET';

export const REPO = new URL('../../', import.meta.url).pathname;
/**
 * Where the trust tests record what they tried: test/results/ (tracked, quoted by
 * docs/reliability.md) only when asked with PPDP_RECORD_RESULTS=1 (`npm run test:record`);
 * an ordinary test run writes to the untracked test/results/latest/ and changes no tracked file.
 */
export const RESULTS = join(REPO, 'test', 'results', process.env.PPDP_RECORD_RESULTS === '1' ? '' : 'latest');

interface ManifestFile {
  name: string;
  bytes: number;
  sha256: string;
}

/**
 * What a reader would trust in `dir`: its manifest, if the manifest is well-formed, claims a
 * verified release and every file it lists is there with its size and SHA-256. Otherwise null.
 */
export function trustedRelease(dir: string): { runId: string; files: ManifestFile[] } | null {
  let manifest: { format?: unknown; verified?: unknown; runId?: unknown; files?: unknown };
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  } catch {
    return null;
  }
  if (manifest.format !== 'ppdp-release/1' || manifest.verified !== true || !Array.isArray(manifest.files))
    return null;
  const files = manifest.files as ManifestFile[];
  if (files.length === 0) return null;
  for (const f of files) {
    const path = join(dir, f.name);
    if (!existsSync(path)) return null;
    const bytes = readFileSync(path);
    if (bytes.length !== f.bytes) return null;
    if (createHash('sha256').update(bytes).digest('hex') !== f.sha256) return null;
  }
  return { runId: String(manifest.runId), files };
}

/** Whether `dir` holds a manifest at all (trusted or not). */
export function hasManifest(dir: string): boolean {
  return existsSync(join(dir, 'manifest.json'));
}

/** name → SHA-256 of every regular file directly in `dir` (empty when it does not exist). */
export function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  if (!statSync(dir).isDirectory())
    return { '': createHash('sha256').update(readFileSync(dir)).digest('hex') };
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out[name] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return out;
}

/** Writes one trust test's results (what was tried, what happened) for docs/reliability.md. */
export function writeResults(name: string, results: unknown): void {
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(
    join(RESULTS, `trust-${name}.json`),
    `${JSON.stringify({ test: name, node: process.version, ...(results as object) }, null, 2)}\n`,
  );
}

/** Runs the CLI's `main` in this process, capturing stdout and stderr. */
export async function runCli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write;
  const err = process.stderr.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    const status = await main(args);
    return { status, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

/** Sets environment variables for the duration of `work`. */
export async function withEnv<T>(
  env: Record<string, string> | undefined,
  work: () => Promise<T> | T,
): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env ?? {}).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env ?? {});
  try {
    return await work();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Every file under `dir`, recursively, as paths relative to it. */
export function listFiles(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}
