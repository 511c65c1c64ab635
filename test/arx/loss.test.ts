/**
 * The metric `loss` against ARX 3.9.2 itself, run here: ARX's Loss (Metric.createLossMetric)
 * for its optimum and for ppdp's NCP-optimal node, against ppdp's Loss at the same nodes, to
 * 1e-9 (ARX truncates each attribute's value to 10 decimals), and ppdp's optimum under `loss`
 * against ARX's. The Java side (test/arx/LossRun.java, with bench/arx/ArxHarness.java) is
 * compiled into a temporary folder.
 * Needs java and javac 17 and ARX's jars: $ARX_LIB, else ../shared/peers/arx/lib.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registrySample } from '../../bench/registry-sample.ts';
import { hierarchyCommand } from '../../src/cli/hierarchy.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { prepareGeneralization, search } from '../../src/methods/generalization/index.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { type LossSpec, loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { ARX_LIB, requires } from '../helpers/requires.ts';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
const LIB = ARX_LIB;
const peer = requires('arx');
const ADULT = join(ROOT, 'examples/adult/release.json');

type Node = Record<string, number>;
interface ArxNode {
  node: Node;
  loss: number;
}

let scratch: string;
let classes: string;

beforeAll(() => {
  if (!peer.available) return;
  scratch = mkdtempSync(join(os.tmpdir(), 'ppdp-arx-loss-'));
  classes = join(scratch, 'classes');
  const sources = ['test/arx/LossRun.java', 'bench/arx/ArxHarness.java'].map((f) => join(ROOT, f));
  const javac = spawnSync('javac', ['-cp', `${LIB}/*`, '-d', classes, ...sources], { encoding: 'utf8' });
  if (javac.status !== 0) throw new Error(`javac failed: ${javac.stderr}`);
}, 120_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const nodeArg = (node: Node) =>
  Object.entries(node)
    .map(([q, l]) => `${q}=${l}`)
    .join(',');

function parseNode(text: string): Node {
  return Object.fromEntries(
    text
      .split(',')
      .map((kv) => [kv.slice(0, kv.lastIndexOf('=')), Number(kv.slice(kv.lastIndexOf('=') + 1))]),
  );
}

/** ARX's optimum and the asked nodes, each with the Loss ARX reports. */
function arx(args: string[]): { optimum: ArxNode; nodes: ArxNode[] } {
  const run = spawnSync('java', ['-cp', `${LIB}/*:${classes}`, 'LossRun', ...args], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ARX failed: ${run.stderr}`);
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => line.split('\t'));
  const parse = (f: string[]) => ({ node: parseNode(f[1]!), loss: Number(f[2]) });
  return {
    optimum: parse(lines.find((f) => f[0] === 'optimum')!),
    nodes: lines.filter((f) => f[0] === 'node').map(parse),
  };
}

/** ARX's arguments for a spec's data, hierarchies (ppdp's builders' written as files) and settings. */
function arxArgs(spec: ReleaseSpec, loss: LossSpec): string[] {
  const built = join(scratch, `hierarchies-${Math.random().toString(36).slice(2)}`);
  if (spec.attributes.some((a) => a.hierarchy && a.hierarchy.kind !== 'file'))
    hierarchyCommand([spec.file, '--out', built]);
  const args = [`data=${resolve(spec.file, '..', spec.input)}`, `delim=${spec.format?.delimiter ?? ','}`];
  for (const a of spec.attributes) {
    if (a.type === 'quasi-identifying' && a.hierarchy)
      args.push(
        `qi=${a.name}=${a.hierarchy.kind === 'file' ? a.hierarchy.path : join(built, `${a.name}.csv`)}`,
      );
    if (a.type === 'sensitive') args.push(`sa=${a.name}`);
  }
  for (const m of spec.privacy) {
    if (m.model === 'k-anonymity') args.push(`model=k:${m.k}`);
    else if (m.model === 'distinct-l-diversity') args.push(`model=distinct-l:${m.l}`);
    else throw new Error(`no ARX model here for ${m.model}`);
  }
  const method = spec.method as { maxSuppression: number };
  args.push(`supp=${method.maxSuppression}`, `aggregate=${loss.aggregate}`, `gs=${loss.gsFactor}`);
  // ARX weighs an attribute it is not told about 0.5, ppdp 1: every QI's weight, when any.
  if (loss.weights)
    for (const a of spec.attributes)
      if (a.type === 'quasi-identifying') args.push(`weight=${a.name}=${loss.weights[a.name] ?? 1}`);
  return args;
}

/** ppdp prepared for `metric`, and its search's node (or the given one) with its Loss there. */
function ppdp(spec: ReleaseSpec, metric: 'loss' | 'ncp', loss: LossSpec) {
  const s = { ...spec, method: { ...spec.method, metric, loss } } as ReleaseSpec;
  const prepared = prepareGeneralization(s, readInput(s), wasmGroupingKernel);
  return (fixed?: Node): { node: Node; loss: number } => {
    const outcome = search(prepared, wasmGroupingKernel, fixed);
    outcome.evaluator.dispose();
    return {
      node: Object.fromEntries(prepared.qis.map((q, i) => [q.name, outcome.best.levels[i]!])),
      loss: outcome.best.values.loss,
    };
  };
}

/**
 * ppdp's optimum under `loss` is ARX's, with ARX's Loss to 1e-9, and so is ppdp's Loss at ppdp's
 * NCP-optimal node and at the `others` (which ARX measures on request).
 */
function compare(spec: ReleaseSpec, loss: LossSpec, others: (optimum: Node) => Node[] = () => []): void {
  const byLoss = ppdp(spec, 'loss', loss);
  const mine = byLoss();
  const nodes = [ppdp(spec, 'ncp', loss)().node, ...others(mine.node)];
  const theirs = arx([...arxArgs(spec, loss), ...nodes.map((n) => `node=${nodeArg(n)}`)]);
  expect(mine.node).toEqual(theirs.optimum.node);
  expect(Math.abs(mine.loss - theirs.optimum.loss)).toBeLessThan(1e-9);
  expect(theirs.nodes.map((n) => n.node)).toEqual(nodes);
  for (const [i, node] of nodes.entries()) {
    expect(Math.abs(byLoss(node).loss - theirs.nodes[i]!.loss)).toBeLessThan(1e-9);
  }
}

/** Generalizations of the optimum (feasible too: k-anonymity holds at every generalization). */
const above = (optimum: Node) => [
  { ...optimum, sex: optimum.sex! + 1, race: optimum.race! + 1 },
  { ...optimum, 'native-country': optimum['native-country']! + 1 },
];

peer.describe('metric loss against ARX 3.9.2, live', () => {
  const adult = loadSpec(ADULT);

  it('Adult, k = 5, 2 % suppression, geometric mean (ARX default)', () => {
    compare(adult, { aggregate: 'geometric', gsFactor: 0.5, weights: undefined }, above);
  }, 300_000);

  it('Adult, k = 5, 2 % suppression, arithmetic mean', () => {
    compare(adult, { aggregate: 'arithmetic', gsFactor: 0.5, weights: undefined }, above);
  }, 300_000);

  it('built hierarchies, k = 5 + distinct l = 3, 5 % suppression, gs-factor 0.3, weights', async () => {
    const { spec: file } = await registrySample(2000);
    scratchDirs.push(join(file, '..'));
    const base = loadSpec(file);
    const spec = {
      ...base,
      privacy: [...base.privacy, { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 3 }],
      method: { ...base.method, maxSuppression: 0.05 },
    } as ReleaseSpec;
    compare(spec, { aggregate: 'geometric', gsFactor: 0.3, weights: { age: 1, postcode: 0.5, sex: 0.25 } });
  }, 300_000);
});

const scratchDirs: string[] = [];
afterAll(() => {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});
