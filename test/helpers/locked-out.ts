/**
 * Runs a test's commands as a user whom `chmod 000` locks out. Root reads every file whatever
 * its mode, and tests run as root in CI: a root test process (vitest's forks pool) takes the
 * `nobody` user's effective ids for the call and gets root's back after. Elsewhere the call
 * runs as the user it is.
 */
import { chownSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** nobody's uid and gid from /etc/passwd (65534, the usual, without one). */
function nobody(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

function chownTree(path: string, uid: number, gid: number): void {
  chownSync(path, uid, gid);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.isDirectory()) chownTree(join(path, entry.name), uid, gid);
    else chownSync(join(path, entry.name), uid, gid);
  }
}

/**
 * For a child process that mode 000 (or 555) locks out: as root, `dir` is given to nobody and
 * the child is to run as nobody (spawn's `uid` and `gid`); elsewhere it runs as the user it is.
 * A child, not `lockedOut`, where the command reads its environment: with only its effective
 * ids changed, a process is privileged, and Node then ignores TMPDIR.
 */
export function lockedOutChild(dir: string): { uid?: number; gid?: number } {
  if (process.geteuid?.() !== 0) return {};
  const { uid, gid } = nobody();
  chownTree(dir, uid, gid);
  return { uid, gid };
}

/**
 * `work` run so that files of mode 000 cannot be read. As root, `dir` (the test's folder, with
 * every file the commands read or write) is first given to nobody; lock files after this.
 */
export async function lockedOut<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const { geteuid, seteuid, setegid } = process;
  if (geteuid?.() !== 0 || !seteuid || !setegid) return work();
  const { uid, gid } = nobody();
  chownTree(dir, uid, gid);
  // The group first: once the user is nobody it may not change its group.
  setegid(gid);
  seteuid(uid);
  try {
    return await work();
  } finally {
    seteuid(0);
    setegid(0);
  }
}
