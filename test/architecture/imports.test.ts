/**
 * The house does not climb: every import in src/, functions/ and infra/ goes to the same folder
 * or to a folder on a lower floor, and no files import each other in a circle (type imports
 * included: a circle of types is still a circle a reader must hold at once).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Floors from the ground up: a folder may import only from its own floor's folder and the
 * floors below. The contracts (errors, report and claims shapes) and small utilities are the
 * ground; the verifier sits below the hierarchy builders and the methods it checks.
 */
const FLOORS = [
  'src/errors.ts',
  'src/contracts',
  'src/catalogue',
  'src/util',
  'src/wasm',
  'src/kernels',
  'src/release-spec',
  'src/data',
  'src/claims',
  'src/verify',
  'src/hierarchy',
  'src/models',
  'src/metrics',
  'src/methods',
  'src/report',
  'src/pipeline',
  'src/evaluate',
  'src/apply',
  'src/explore',
  'src/api.ts',
  'src/cli',
  'functions',
  'infra',
] as const;

/** The floor unit a repository path belongs to: a folder of FLOORS, or one of its files. */
function unitOf(path: string): string | undefined {
  return FLOORS.find((f) => path === f || path.startsWith(`${f}/`));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'cdk.out' ? [] : sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]|\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

/** Every file's relative imports, as repository paths. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of ['src', 'functions', 'infra'].flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets = [...text.matchAll(IMPORT)].map((m) =>
      relative(ROOT, normalize(join(ROOT, dirname(file), m[1] ?? m[2]!))),
    );
    graph.set(file, targets);
  }
  return graph;
}

/** Imports that go up a floor: `file → target (its floor above file's)`. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const rank = (path: string) => {
    const unit = unitOf(path);
    return unit === undefined ? -1 : FLOORS.indexOf(unit as (typeof FLOORS)[number]);
  };
  const up: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (!graph.has(target)) continue; // not source: the built WASM module, a JSON file
      if (rank(target) > rank(file)) up.push(`${file} → ${target}`);
    }
  }
  return up;
}

/** Circles of files that import each other (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the import graph', () => {
  const graph = importGraph();

  it('reads every source file and places it on a floor', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect([...graph.keys()].filter((f) => unitOf(f) === undefined)).toEqual([]);
  });

  it('no import goes up a floor', () => {
    expect(upwardImports(graph)).toEqual([]);
  });

  it('no files import each other in a circle', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('the checks catch what they are for', () => {
    const made = new Map([
      ['src/util/a.ts', ['src/data/b.ts']],
      ['src/data/b.ts', ['src/data/c.ts']],
      ['src/data/c.ts', ['src/data/b.ts']],
    ]);
    expect(upwardImports(made)).toEqual(['src/util/a.ts → src/data/b.ts']);
    expect(circles(made)).toEqual([['src/data/b.ts', 'src/data/c.ts']]);
  });
});
