/** Temporary copies of the Adult example that a test may break on purpose. */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { ADULT_DIR } from './adult.ts';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export interface Workspace {
  readonly dir: string;
  readonly spec: string;
  read(name: string): string;
  write(name: string, content: string | Uint8Array): void;
  /** Edits release.json as an object. */
  editSpec(edit: (spec: Record<string, unknown>) => void): void;
  /** Lists a folder's entries, or null if it does not exist. */
  list(relative: string): string[] | null;
}

/** A copy of examples/adult, optionally cut to its first `rows` data rows. */
export function adultWorkspace(rows?: number): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'ppdp-test-'));
  made.push(dir);
  cpSync(ADULT_DIR, dir, { recursive: true });
  const ws: Workspace = {
    dir,
    spec: join(dir, 'release.json'),
    read: (name) => readFileSync(join(dir, name), 'utf8'),
    write: (name, content) => writeFileSync(join(dir, name), content),
    editSpec(edit) {
      const spec = JSON.parse(ws.read('release.json'));
      edit(spec);
      ws.write('release.json', JSON.stringify(spec, null, 2));
    },
    list(relative) {
      try {
        return readdirSync(join(dir, relative)).sort();
      } catch {
        return null;
      }
    },
  };
  if (rows !== undefined) {
    const lines = ws.read('adult.csv').split(/\r?\n/);
    ws.write('adult.csv', `${lines.slice(0, rows + 1).join('\n')}\n`);
  }
  return ws;
}
