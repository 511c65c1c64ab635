/**
 * The docs run. Every ```sh block of README.md, docs/ and the examples' READMEs is executed
 * with bash and must exit 0, unless the line before its fence says why it cannot run here:
 * `<!-- not-run: needs AWS -->`. The blocks of one file run in order in one scratch folder
 * holding a copy of examples/ (so a later block sees what an earlier one wrote), with `npx ppdp`
 * running this clone's bin/ppdp.mjs. Every ```json block parses, and every one that is a
 * release spec is valid.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSpecFiles, parseSpec } from '../../src/release-spec/spec.ts';
import { ADULT_DIR } from '../helpers/adult.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const EXAMPLES = join(ROOT, 'examples');

const markdown = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdown(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
const FILES = ['README.md', ...markdown('docs'), ...markdown('examples')];

interface Block {
  readonly text: string;
  readonly line: number;
  /** The reason given by a `<!-- not-run: … -->` marker on the line before the fence. */
  readonly notRun: string | undefined;
}

function blocks(file: string, lang: string): Block[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== `\`\`\`${lang}`) continue;
    const end = lines.indexOf('```', i + 1);
    const marker = /^<!-- not-run: (.+) -->$/.exec(lines[i - 1] ?? '');
    found.push({ text: lines.slice(i + 1, end).join('\n'), line: i + 1, notRun: marker?.[1] });
    i = end;
  }
  return found;
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

// `npx ppdp …` in a block runs this clone's CLI, as `npx ppdp` does in the clone.
const PRELUDE = `set -euo pipefail
npx() { if [ "$1" = ppdp ]; then shift; node ${JSON.stringify(join(ROOT, 'bin/ppdp.mjs'))} "$@"; else command npx "$@"; fi; }
`;

describe('every shell example runs', () => {
  const withBlocks = FILES.map((file) => ({ file, sh: blocks(file, 'sh') })).filter((f) => f.sh.length > 0);

  it('the docs have shell examples, and every one that is not run says why', () => {
    expect(withBlocks.map((f) => f.file)).toEqual(expect.arrayContaining(['README.md', 'docs/guide.md']));
    for (const { file, sh } of withBlocks) {
      for (const b of sh)
        if (b.notRun !== undefined) expect(b.notRun.length, `${file}:${b.line}`).toBeGreaterThan(8);
    }
  });

  it.each(withBlocks.map((f) => [f.file, f.sh] as const))(
    '%s',
    (file, sh) => {
      const runnable = sh.filter((b) => b.notRun === undefined);
      if (runnable.length === 0) return;
      const dir = mkdtempSync(join(tmpdir(), 'ppdp-docs-'));
      scratch.push(dir);
      cpSync(EXAMPLES, join(dir, 'examples'), { recursive: true });
      for (const b of runnable) {
        const r = spawnSync('bash', ['-c', PRELUDE + b.text], {
          cwd: dir,
          encoding: 'utf8',
          // Some examples run several releases (explore's Mondrian frontier: four, measures
          // included): a loaded machine takes past two minutes for them.
          timeout: 240_000,
        });
        expect(r.status, `${file}:${b.line} exited ${r.status}\n${b.text}\n--- stderr:\n${r.stderr}`).toBe(0);
      }
    },
    600_000,
  );
});

describe('every JSON example parses, and every release spec is valid', () => {
  const examples = readdirSync(EXAMPLES).flatMap((d) =>
    readdirSync(join(EXAMPLES, d))
      .filter((f) => /^release.*\.json$/.test(f))
      .map((f) => join(EXAMPLES, d, f)),
  );
  const json = FILES.flatMap((file) =>
    blocks(file, 'json').map((b) => [`${file}:${b.line}`, b.text] as const),
  );

  it('there are spec examples in the docs', () => expect(json.length).toBeGreaterThanOrEqual(5));

  it.each(json)('%s', (_, text) => {
    const value = JSON.parse(text);
    if (!(value && typeof value === 'object' && 'attributes' in value)) return;
    // A spec shown in the docs is one of the examples (then its files exist), or stands alone.
    const same = examples.find(
      (f) => JSON.stringify(JSON.parse(readFileSync(f, 'utf8'))) === JSON.stringify(value),
    );
    const spec = parseSpec(value, same ?? join(ADULT_DIR, 'release.json'));
    if (same) checkSpecFiles(spec);
  });

  it('the spec in docs/release-spec.md is the bundled Adult example', () => {
    const [first] = blocks('docs/release-spec.md', 'json');
    expect(JSON.parse(first!.text)).toEqual(
      JSON.parse(readFileSync(join(ADULT_DIR, 'release.json'), 'utf8')),
    );
  });
});

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchors = (file: string): Set<string> =>
  new Set(
    [...readFileSync(file, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );

describe('the docs are self-contained', () => {
  it.each(FILES)('%s: every relative link points at a file (and heading) of the repository', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
      const [path, anchor] = target!.split('#');
      const resolved = path ? join(ROOT, file, '..', path) : join(ROOT, file);
      expect(existsSync(resolved), `${file}: link to ${target}`).toBe(true);
      if (anchor && resolved.endsWith('.md')) {
        expect(anchors(resolved), `${file}: link to ${target}`).toContain(anchor);
      }
    }
  });

  // What a user of the package does not have: the project's source notes and tracker.
  const OUTSIDE = /\bseeds? ?\d{3}\b|\bSPEC(\.md| ?§)|\b[Ii]ssues? #?\d+\b|\.\.\/shared\b/;
  const sources = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory()
        ? sources(join(dir, e.name))
        : /\.(ts|md|json)$/.test(e.name)
          ? [join(dir, e.name)]
          : [],
    );
  const SHOWN = [...FILES, ...sources('src'), ...sources('bench')];

  it.each(SHOWN)('%s cites nothing outside the repository', (file) => {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const outside = lines.map((line, i) => `${i + 1}: ${line}`).filter((line) => OUTSIDE.test(line));
    expect(outside).toEqual([]);
  });
});

it("the README's quick start releases Adult and runs the fast tests; CI runs every test", () => {
  const [quickStart] = blocks('README.md', 'sh');
  const [install, test] = quickStart!.text.trim().split('\n');
  expect(install).toBe('npm install && npx ppdp release examples/adult/release.json --out out/adult');
  expect(test).toBe('npm test');
  expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('`npm run test:all`');
  expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm run test:all$/m);
  // The release half of the first command, run as the installed bin runs it.
  const out = mkdtempSync(join(tmpdir(), 'ppdp-readme-'));
  scratch.push(out);
  const r = spawnSync(
    process.execPath,
    [join(ROOT, 'bin/ppdp.mjs'), 'release', 'examples/adult/release.json', '--out', join(out, 'adult')],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect(r.stderr).toMatch(/verifying the release independently/);
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^verified release in .*: k = \d+/);
  expect(existsSync(join(out, 'adult', 'manifest.json'))).toBe(true);
});
