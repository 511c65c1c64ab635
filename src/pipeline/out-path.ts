/**
 * Where a command may write (`--out`): never over, into or around what it reads, and never
 * into a published release folder. Every command that writes checks its `--out` here before
 * any work, so a mistyped path is refused instead of replacing the input table, the spec or a
 * release's files (after which the release no longer matches its manifest).
 */
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { OutputError } from '../errors.ts';
import { isPopulationModel, type ReleaseSpec } from '../release-spec/spec.ts';
import { errorCode, FILE_SYSTEM_REASONS } from '../util/unreadable.ts';
import { isManifest, MANIFEST } from './publish.ts';
import { urlScheme } from './storage/index.ts';

/** A file or folder a command reads, and what to call it in a message ("the input"). */
export interface ReadPath {
  readonly path: string;
  readonly what: string;
}

/**
 * What `--out` is: a file written whole, a folder the command writes its files into, or a
 * release folder (an earlier ppdp release in it is replaced: `release`, `apply`).
 */
export type OutKind = 'file' | 'folder' | 'release';

/** The files a spec makes a command read: the spec, its input, its hierarchy files, its population table. */
export function specReads(spec: ReleaseSpec): ReadPath[] {
  return [
    { path: spec.input, what: 'the input' },
    { path: spec.file, what: 'the spec' },
    ...spec.attributes.flatMap((a) =>
      a.hierarchy?.kind === 'file' ? [{ path: a.hierarchy.path, what: `the hierarchy of ${a.name}` }] : [],
    ),
    ...spec.privacy
      .filter(isPopulationModel)
      .map((m) => ({ path: m.population, what: 'the population table' })),
  ];
}

/**
 * Refuses, before any work, a file or folder `--out` (named `option` in messages) that is a URL
 * (s3://…: only a release writes to a store), one that is one of `reads`
 * or lies inside one of them (a folder read); for a folder output, one that contains any of
 * them; and any path in a published release folder (one holding a ppdp manifest.json), but
 * for a release output the folder itself, whose earlier release is replaced. Paths compare as
 * the filesystem resolves them: links followed, `./x` and `x` alike, letter case as stored.
 */
export function checkOut(out: string, reads: readonly ReadPath[], kind: OutKind, option = '--out'): void {
  const named = `${option} ${out}`;
  if (kind !== 'release') checkLocal(out, kind, option);
  const target = realPath(out);
  const isDir = existsSync(target) && statSync(target).isDirectory();
  if (kind !== 'file' && existsSync(target) && !isDir) {
    throw new OutputError(
      'E_OUT_NOT_DIR',
      `${named}: exists and is a file, not a folder`,
      `choose a new folder${kind === 'release' ? ' for the release' : ''}, or remove the file`,
    );
  }
  const elsewhere =
    kind === 'file'
      ? 'name another file, outside the folders ppdp reads'
      : `write ${kind === 'release' ? 'the release' : 'them'} to a folder of its own, e.g. a sibling folder`;
  for (const r of reads) {
    if (!existsSync(r.path)) continue; // nothing to overwrite; the command says it is missing
    const read = realPath(r.path);
    const readDir = statSync(read).isDirectory();
    if (readDir) {
      if (target === read || inside(read, target)) {
        throw new OutputError(
          releaseIn(read) ? 'E_OUT_IN_RELEASE' : 'E_OUT_IN_INPUT',
          `${named}: is or lies inside ${r.what} (${shown(r.path)}), which ppdp reads`,
          elsewhere,
        );
      }
    } else if (target === read) {
      throw new OutputError(
        'E_OUT_IN_INPUT',
        `${named}: is ${r.what} (${shown(r.path)}), which ppdp reads; writing there would replace it`,
        elsewhere,
      );
    }
    if (kind === 'file') continue;
    if (!readDir && target === dirname(read)) {
      throw new OutputError('E_OUT_IN_INPUT', `${named}: is ${r.what}'s own folder`, elsewhere);
    }
    if (inside(target, read)) {
      throw new OutputError(
        'E_OUT_IN_INPUT',
        `${named}: contains ${r.what} (${relative(target, read)}), so sharing the ${kind === 'release' ? 'release' : 'folder'} would share it too`,
        elsewhere,
      );
    }
  }
  // A release folder holds the files its manifest lists: another file there is unlisted, and
  // publishing the release again removes it.
  const release = releaseFolderOf(kind === 'release' ? dirname(target) : target);
  if (release !== undefined) {
    throw new OutputError(
      'E_OUT_IN_RELEASE',
      `${named}: ${release === target ? 'is' : 'lies inside'} the published release ${shown(release)} (it holds a ppdp ${MANIFEST})`,
      `a release folder holds only its release's files: ${kind === 'file' ? 'write the file outside it' : 'write outside it, e.g. a sibling folder'}`,
    );
  }
  if (kind === 'file' && isDir) {
    throw new OutputError(
      'E_OUT_IS_DIR',
      `${named}: is a folder; ${option} names the file to write`,
      'give the path of the file to write (inside that folder, or elsewhere)',
    );
  }
  // A file is written through a rename, which would put a plain file in place of a pipe or a
  // device (/dev/null, as root).
  if (kind === 'file' && existsSync(target) && !statSync(target).isFile()) {
    throw new OutputError(
      'E_OUT_NOT_FILE',
      `${named}: exists and is not a regular file (a pipe or a device)`,
      'give the path of a new file, or of a file it may replace',
    );
  }
  checkWritable(out, kind, option);
}

/**
 * Refuses, before any work, an `--out` that could not be written: one under a file (every
 * folder on its path must be a folder, or creating it fails), or whose folder — for a file,
 * the folder it goes in; for a folder, itself — or, when that is not there yet, the nearest
 * folder above it, this user may not write in. Otherwise the command would fail at its last
 * step, after all its work.
 */
export function checkWritable(out: string, kind: OutKind, option = '--out'): void {
  const target = realPath(out);
  let dir = kind === 'file' ? dirname(target) : target;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  if (!statSync(dir).isDirectory()) {
    throw new OutputError(
      'E_OUT_NOT_DIR',
      `${option} ${out}: ${shown(dir)} is a file, not a folder, so nothing can be written under it`,
      `choose an ${option} whose folders are folders, or move that file away`,
    );
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw new OutputError(
      'E_OUT_NOT_WRITABLE',
      `${option} ${out}: this user may not write in the folder ${shown(dir)}`,
      `choose an ${option} in a folder you may write to, or change that folder's permissions`,
    );
  }
}

/**
 * Writes `path` whole through a temporary file beside it and a rename, creating its folder: a
 * reader never sees half a file, and a failed write leaves no temporary file. A write the
 * filesystem refuses is an OutputError naming the path.
 */
export function writeAtomically(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.partial`);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was written there, or nothing can be: the write's own error tells
    }
    throw writeError(e, path);
  }
}

/** Creates a folder (and those above it) for an output; a refusal is an OutputError naming it. */
export function makeFolder(path: string): void {
  try {
    mkdirSync(path, { recursive: true });
  } catch (e) {
    throw writeError(e, path);
  }
}

/** Why a write failed, by the filesystem's code; those it names are a person's to fix. */
const WRITE_FAILURES: Record<string, string> = {
  ...FILE_SYSTEM_REASONS,
  ENOTDIR: 'a folder on its path is a file',
  EEXIST: 'a folder on its path is a file',
  EISDIR: 'it is a folder',
};

/**
 * A failed write of `path` (a file or a folder) as an OutputError naming it and how to fix it;
 * any other error as it was. checkWritable refuses most of these before any work: this is what
 * changed in between, or what it cannot see (a full disk).
 */
export function writeError(e: unknown, path: string): unknown {
  const code = errorCode(e);
  const why = code === undefined ? undefined : WRITE_FAILURES[code];
  if (why === undefined) return e;
  return new OutputError(
    'E_OUT_WRITE',
    `${shown(path)}: cannot be written (${why}, ${code})`,
    code === 'ENOSPC' || code === 'EDQUOT'
      ? 'free some space, or choose an --out on another disk'
      : 'choose an --out in a folder you may write to, whose folders are all folders',
  );
}

/**
 * For a folder output holding files of the names `own` lists: refuses, before any work, unless
 * `force`, a folder that holds anything else (the command would write beside files it does not
 * know), or a file of one of those names that `own[name]` does not recognise by its content as
 * an earlier output of `ppdp <command>` (checkReplace). A new or empty folder, or one holding
 * only an earlier run's files (or the temporary `.<name>.partial` of an interrupted one), passes.
 */
export function checkFolderReplace(
  out: string,
  command: string,
  force: boolean,
  own: Readonly<Record<string, (path: string) => boolean>>,
  option = '--out',
): void {
  if (force || !existsSync(out) || !statSync(out).isDirectory()) return; // checkOut refused a file
  const names = Object.keys(own);
  const others = readdirSync(out).filter((entry) => {
    const name = /^\.(.+)\.partial$/.exec(entry)?.[1] ?? entry;
    return !names.includes(name) || !statSync(join(out, entry)).isFile();
  });
  if (others.length > 0) {
    const listed = others.slice(0, 3).join(', ') + (others.length > 3 ? ', …' : '');
    throw new OutputError(
      'E_OUT_EXISTS',
      `${option} ${out}: holds ${others.length === 1 ? 'an entry' : `${others.length} entries`} ppdp ${command} does not write (${listed}); it writes ${names.join(', ')} only into a new or empty folder, or one holding its own earlier output`,
      `choose a new or empty folder, or add --force to write there (replacing any ${names.join(', ')})`,
    );
  }
  for (const name of names) checkReplace(join(out, name), command, force, own[name]);
}

/**
 * Refuses a file or folder `--out` that is a URL: such an output is written with the filesystem,
 * where s3://b/k would become a local folder named `s3:` (only a release writes through a store,
 * src/pipeline/storage).
 */
export function checkLocal(out: string, kind: 'file' | 'folder', option = '--out'): void {
  const scheme = urlScheme(out);
  if (scheme === undefined) return;
  throw new OutputError(
    'E_OUT_NOT_LOCAL',
    `${option} ${out}: ${option} takes a local path here, not a URL (${scheme}:)`,
    `give a local ${kind} (a name holding ":" as ./name), and copy it to the store afterwards`,
  );
}

/**
 * Refuses, before any work, to replace a file already at `out` unless `force`, or unless
 * `earlier(out)` recognises it by its content as an earlier output of `ppdp <command>` (re-running
 * a command rewrites its own output). checkOut keeps out what a command reads; this keeps the
 * rest: `reconstruct` reads only the release folder, not the spec the release was made from.
 * Without `earlier` (init: a spec is edited by hand), any file there is kept.
 */
export function checkReplace(
  out: string,
  command: string,
  force: boolean,
  earlier?: (path: string) => boolean,
): void {
  if (force || !existsSync(out) || !statSync(out).isFile()) return; // checkOut refused the rest
  if (earlier?.(out)) return;
  throw new OutputError(
    'E_OUT_EXISTS',
    `${basename(out)} already exists (${resolve(out)})${earlier ? `, and is no earlier output of ppdp ${command}` : ''}`,
    'choose another --out, or add --force to overwrite it',
  );
}

/** The first `bytes` of a file as UTF-8 (enough to recognise what wrote it); '' if unreadable. */
export function fileHead(path: string, bytes = 64 * 1024): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(bytes);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, bytes, 0));
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The path as the filesystem resolves it; for a path not there yet, its nearest existing folder resolved. */
function realPath(path: string): string {
  if (existsSync(path)) return realpathSync.native(path);
  const parent = dirname(path);
  return parent === path ? resolve(path) : join(realPath(parent), basename(path));
}

/** A path for a message: relative to the working folder when it lies inside it. */
function shown(path: string): string {
  const abs = resolve(path);
  return inside(process.cwd(), abs) ? relative(process.cwd(), abs) : abs === process.cwd() ? '.' : path;
}

/** Whether `path` lies strictly inside `folder` (both resolved). */
function inside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/**
 * The published release `path` is or lies inside: the nearest folder from it up that holds a
 * ppdp manifest.json (resolved as the filesystem resolves it); undefined when none does.
 */
export function releaseFolderOf(path: string): string | undefined {
  for (let dir = realPath(path); ; dir = dirname(dir)) {
    if (releaseIn(dir)) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

function releaseIn(dir: string): boolean {
  const manifest = join(dir, MANIFEST);
  try {
    return existsSync(manifest) && isManifest(readFileSync(manifest));
  } catch {
    return false; // unreadable: not known to be a release
  }
}
