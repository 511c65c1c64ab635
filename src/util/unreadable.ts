/**
 * One wording for a file that is there but cannot be read (a permission, a folder in its
 * place, an I/O error): every reader of a user's file (input table, spec, hierarchy, population
 * table, a release's report or manifest) names the file, says why and how to fix it, and never
 * calls an unreadable file "missing" or "not JSON".
 */
import { resolve } from 'node:path';

/** The error code of a failed file-system call, if it has one. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Why a file-system call failed, for the codes whose reason does not depend on what the path
 * is for (a person's to fix): writers add their own wording for the rest.
 */
export const FILE_SYSTEM_REASONS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the filesystem is read-only',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is used up',
};

/** Whether a failed read means the file (or a folder on its path) does not exist. */
export function isMissing(err: unknown): boolean {
  const code = errorCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * The message and hint for `what` (e.g. "release spec") at `path`, named `name` in the message,
 * that exists but could not be read with error `err`.
 */
export function cannotRead(
  what: string,
  name: string,
  path: string,
  err: unknown,
): { message: string; hint: string } {
  const full = resolve(path);
  const code = errorCode(err) ?? 'unknown error';
  if (code === 'EACCES' || code === 'EPERM') {
    return {
      message: `${name}: ${what} exists but cannot be read: permission denied (${full}: ${code})`,
      hint: `give the user running ppdp read access to the file and search access to its folders (e.g. chmod a+r ${full}), or copy it somewhere readable`,
    };
  }
  if (code === 'EISDIR') {
    return {
      message: `${name}: ${what} cannot be read: it is a folder (${full})`,
      hint: 'name the file itself, not its folder',
    };
  }
  return {
    message: `${name}: ${what} cannot be read (${full}: ${code})`,
    hint: 'make sure the path names a readable file, not a folder',
  };
}
