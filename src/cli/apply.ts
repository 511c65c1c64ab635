/**
 * `ppdp apply <release-dir> <release.json> --out <dir>`: the transformation of a published
 * release re-applied to the data a spec names, verified and published as a release
 * (src/apply/).
 */
import { appliedMethod, readSavedRelease } from '../apply/apply.ts';
import { PpdpError } from '../errors.ts';
import { buildGeneralization } from '../methods/generalization/index.ts';
import type { ReleaseMethod } from '../methods/method.ts';
import { executeRelease } from '../pipeline/engine.ts';
import { checkOut } from '../pipeline/out-path.ts';
import { loadSpec, type ReleaseSpec } from '../release-spec/spec.ts';
import { cautionLines } from '../report/audit.ts';
import { emptyRecord } from '../util/record.ts';
import { commandArgs } from './args.ts';
import { groupingKernelOption, progressLines } from './options.ts';
import { kSummary, suppressedSummary } from './summary.ts';

export const APPLY_HELP = `Usage: ppdp apply <release-dir> <release.json> --out <dir> [options]
       ppdp apply --node <qi>=<level>,… <release.json> --out <dir> [options]

Re-applies the transformation a published release saved to the data <release.json> names
(same columns, roles and hierarchies): generalization's lattice node (report.json), Mondrian's
partitions (transformation.json), randomization's distortion matrices (matrices.json). No new
search runs. The result is verified by the same independent checks as any release and
published to <dir> like one; on the same data it reproduces the release's data files exactly.

If the old transformation does not protect the new data (e.g. classes smaller than k beyond
the spec's suppression limit, rows outside every saved partition, a disclosure bound the
matrices no longer meet), nothing is published and the error says what failed.
Anatomy and Slicing releases cannot be re-applied: their buckets depend on the data itself.

With --node (generalization), the given lattice node is released instead of a saved one, e.g.
a node picked in \`ppdp explore\`'s page: it must protect the data under the spec's models and
suppression limit.

Options:
  --out <dir>        output folder (created if missing; not the source release's folder,
                     nor inside any release folder)
  --node <levels>    generalization: the node to release, every quasi-identifier's level
                     (e.g. sex=0,age=2,race=1); no release folder is given then
  --kernel <name>    grouping kernel: wasm (default) or ts (the plain-TS reference)
  --quiet            no progress lines on stderr
  -h, --help         this help

Example:
  ppdp release examples/adult/release.json --out out/adult
  ppdp apply out/adult examples/adult/release.json --out out/adult-again
`;

export async function applyCommand(args: string[]): Promise<number> {
  const parsed = commandArgs(
    'apply',
    args,
    {
      out: { type: 'string' },
      node: { type: 'string' },
      kernel: { type: 'string', default: 'wasm' },
      quiet: { type: 'boolean', default: false },
    },
    {
      help: APPLY_HELP,
      // Two forms: a release re-applied to a spec's data, or a spec released at a chosen node.
      accepts: (positionals, values) =>
        values.node === undefined
          ? positionals.length === 2
          : positionals.length === 1 && Boolean(values.out),
      takes: 'a release folder and a release spec (with --node: one release spec and --out)',
      synopsis:
        'ppdp apply <release-dir> <release.json> --out <dir>, or ppdp apply --node sex=0,age=2 <release.json> --out <dir>',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (values.node !== undefined && values.out) {
    const method = nodeMethod(loadSpec(positionals[0]!), values.node);
    const { report } = await executeRelease(
      { spec: positionals[0]!, out: values.out },
      { method, progress: progressLines(values.quiet), kernel: groupingKernelOption(values.kernel) },
    );
    process.stdout.write(
      `verified release in ${values.out} (node ${values.node}): ${kSummary(report)}${suppressedSummary(report)}\n`,
    );
    process.stdout.write(cautionLines(report)); // the amber verdict's causes, as release prints them
    return 0;
  }
  if (!values.out) throw new PpdpError('E_USAGE', 'ppdp apply needs --out <dir>', 'e.g. --out out/applied');
  const kernel = groupingKernelOption(values.kernel);
  const [dir, specPath] = positionals as [string, string];
  checkOut(values.out, [{ path: dir, what: 'the release being applied' }], 'release');
  const saved = readSavedRelease(dir);
  const method = appliedMethod(saved, loadSpec(specPath));
  const progress = progressLines(values.quiet);
  const { report } = await executeRelease({ spec: specPath, out: values.out }, { method, progress, kernel });
  process.stdout.write(
    `verified release in ${values.out} (the ${method.name} transformation of ${dir} re-applied): ` +
      `${kSummary(report)}${suppressedSummary(report)}\n`,
  );
  process.stdout.write(cautionLines(report));
  return 0;
}

/** `--node sex=0,age=2,…`: generalization at that node, every quasi-identifier named once. */
function nodeMethod(spec: ReleaseSpec, text: string): ReleaseMethod {
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
  const hint = `name every quasi-identifier once with its level, e.g. --node ${qis.map((q) => `${q}=0`).join(',')}`;
  if (spec.method.name !== 'generalization') {
    throw new PpdpError(
      'E_USAGE',
      `--node: the spec's method is ${spec.method.name}, not generalization`,
      hint,
    );
  }
  const node = emptyRecord<number>();
  for (const part of text.split(',')) {
    const m = /^\s*(.+?)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m || !qis.includes(m[1]!) || m[1]! in node) {
      throw new PpdpError('E_USAGE', `--node ${text}: '${part}' is not <quasi-identifier>=<level>`, hint);
    }
    node[m[1]!] = Number(m[2]);
  }
  const missing = qis.filter((q) => !(q in node));
  if (missing.length > 0)
    throw new PpdpError('E_USAGE', `--node ${text}: no level for ${missing.join(', ')}`, hint);
  return { name: 'generalization', build: (ctx) => buildGeneralization(ctx, node, { kind: 'option' }) };
}
