/**
 * Atomic publishing to a local folder: files are staged outside the output folder, verified
 * there, then copied in, and `manifest.json` (with every file's SHA-256) is written last.
 * Readers trust only a folder whose manifest lists matching files. A failed run leaves the
 * output folder as it was.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { OutputError } from '../errors.ts';
import { byCodeUnits } from '../util/format.ts';

export interface ManifestEntry {
  name: string;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: 'ppdp-release/1';
  runId: string;
  verified: true;
  files: ManifestEntry[];
}

/** Fails early, before any work, when `--out` cannot be a release folder. */
export function checkOutDir(out: string, inputPaths: readonly string[]): void {
  const abs = resolve(out);
  if (existsSync(abs) && !statSync(abs).isDirectory()) {
    throw new OutputError(
      'E_OUT_NOT_DIR',
      `--out ${out}: exists and is a file, not a folder`,
      'choose a new folder for the release, or remove the file',
    );
  }
  for (const p of inputPaths) {
    const folder = dirname(resolve(p));
    if (abs === folder) {
      throw new OutputError(
        'E_OUT_IN_INPUT',
        `--out ${out}: is the input's own folder`,
        'write the release to a folder of its own, e.g. --out out/release',
      );
    }
    const rel = relative(abs, resolve(p));
    if (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel)) {
      throw new OutputError(
        'E_OUT_IN_INPUT',
        `--out ${out}: contains the input (${rel}), so sharing the release would share the input too`,
        'write the release to a folder that does not contain the input, e.g. a sibling folder',
      );
    }
  }
}

/** A staging folder outside the output: nothing reaches `--out` before verification. */
export class Staging {
  readonly dir = mkdtempSync(join(tmpdir(), 'ppdp-stage-'));
  private readonly files = new Map<string, Buffer | string>();

  write(name: string, content: Uint8Array | string): string {
    const path = join(this.dir, name);
    writeFileSync(path, content);
    this.files.set(name, typeof content === 'string' ? content : Buffer.from(content));
    return path;
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /** Copies the staged files into `out`, then writes the manifest last. */
  publish(out: string, runId: string): Manifest {
    const abs = resolve(out);
    mkdirSync(abs, { recursive: true });
    // An older release in the same folder is untrusted from the moment its files change.
    rmSync(join(abs, 'manifest.json'), { force: true });
    const files: ManifestEntry[] = [];
    for (const [name, content] of [...this.files].sort(([a], [b]) => byCodeUnits(a, b))) {
      const tmp = join(abs, `.${name}.partial`);
      copyFileSync(join(this.dir, name), tmp);
      renameSync(tmp, join(abs, name));
      const bytes = typeof content === 'string' ? Buffer.byteLength(content) : content.length;
      files.push({ name, bytes, sha256: createHash('sha256').update(content).digest('hex') });
    }
    const manifest: Manifest = { format: 'ppdp-release/1', runId, verified: true, files };
    const tmp = join(abs, '.manifest.json.partial');
    writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(tmp, join(abs, 'manifest.json'));
    return manifest;
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
