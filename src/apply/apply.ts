/**
 * Re-applying a published release's transformation to a table of the same schema
 * (`ppdp apply`): generalization's lattice node (report.json), Mondrian's partitions as
 * boxes (transformation.json), randomization's distortion matrices (matrices.json). The
 * result is built, verified and published like any release (the engine, with this method);
 * when the old transformation does not protect the new table, nothing is published and the
 * error says what fails. Anatomy and Slicing have no transformation to re-apply: their
 * buckets are drawn from the data itself.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import { type ReleaseReport, readReport } from '../contracts/report.ts';
import { NoSolutionError, PpdpError } from '../errors.ts';
import { buildGeneralization } from '../methods/generalization/index.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod } from '../methods/method.ts';
import { prepareMondrian, releaseMondrian } from '../methods/mondrian/index.ts';
import { releaseValues } from '../methods/mondrian/release.ts';
import { assignBoxes, parseTransformation } from '../methods/mondrian/transformation.ts';
import type { SavedDomains } from '../methods/randomization/domain.ts';
import { buildApplied } from '../methods/randomization/index.ts';
import { parseMatricesFile } from '../methods/randomization/matrices-file.ts';
import { requiredK } from '../models/index.ts';
import type { Manifest } from '../pipeline/publish.ts';
import { parseJsonFile } from '../release-spec/json.ts';
import type { RandomizationMethodSpec, ReleaseSpec } from '../release-spec/spec.ts';
import { specSummary } from '../report/spec-summary.ts';
import { inWords } from '../util/format.ts';
import { ownRecord } from '../util/record.ts';
import { cannotRead } from '../util/unreadable.ts';

/** A published release folder, its manifest checked. */
export interface SavedRelease {
  readonly dir: string;
  readonly manifest: Manifest;
  readonly report: ReleaseReport;
}

/** Reads a release folder's manifest and report.json (checked against the manifest). */
export function readSavedRelease(dir: string): SavedRelease {
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) {
    throw new PpdpError(
      'E_APPLY_RELEASE',
      `${dir}: no manifest.json — not a published release`,
      'point at the --out folder of a finished `ppdp release`',
    );
  }
  const manifest = parseJsonFile(
    releaseFile(manifestPath).toString('utf8'),
    manifestPath,
    'E_APPLY_RELEASE',
    're-run the release',
  ) as Manifest;
  const saved = { dir, manifest, report: {} as ReleaseReport };
  const reportPath = join(dir, 'report.json');
  const json = parseJsonFile(
    savedFile(saved, 'report.json'),
    reportPath,
    'E_APPLY_RELEASE',
    're-run the release',
  );
  return { ...saved, report: readReport(json, reportPath) };
}

/** A file of the release, as the manifest lists it (a changed file is refused). */
export function savedFile(saved: Pick<SavedRelease, 'dir' | 'manifest'>, name: string): string {
  const entry = saved.manifest.files?.find((f) => f.name === name);
  const path = join(saved.dir, name);
  if (!entry || !existsSync(path)) {
    throw new PpdpError(
      'E_APPLY_RELEASE',
      `${saved.dir}: the release has no ${name}`,
      name === 'transformation.json'
        ? 'Mondrian releases publish their partitions in transformation.json since this version: re-run the release'
        : 'point at the folder of a finished `ppdp release`',
    );
  }
  const bytes = releaseFile(path);
  if (createHash('sha256').update(bytes).digest('hex') !== entry.sha256) {
    throw new PpdpError(
      'E_APPLY_RELEASE',
      `${path}: does not match the release's manifest.json (changed after publishing)`,
      'apply only an unmodified release: re-run the original release',
    );
  }
  return bytes.toString('utf8');
}

/** A file of a release folder: one there but locked is said to be so, not "not JSON". */
function releaseFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const { message, hint } = cannotRead('release file', path, path, err);
    throw new PpdpError('E_APPLY_RELEASE', message, hint);
  }
}

/** Why each method can or cannot be re-applied. */
const NOT_REAPPLICABLE: Record<string, string> = {
  anatomy:
    "Anatomy's buckets are drawn from the data itself (each bucket holds l distinct sensitive values of the rows at hand), so there is no transformation to carry over to other rows",
  slicing:
    "Slicing's column groups and buckets are drawn from the data itself (its correlations and rows), so there is no transformation to carry over to other rows",
};

/** The method that rebuilds `saved`'s transformation on the spec's table. */
export function appliedMethod(saved: SavedRelease, spec: ReleaseSpec): ReleaseMethod {
  const from = saved.report.spec?.method;
  const name = spec.method.name;
  if (NOT_REAPPLICABLE[from]) {
    throw new PpdpError(
      'E_APPLY_UNSUPPORTED',
      `${saved.dir}: ${from} releases cannot be re-applied: ${NOT_REAPPLICABLE[from]}`,
      `release the new data with \`ppdp release ${basename(spec.file)}\``,
    );
  }
  if (from !== name) {
    throw new PpdpError(
      'E_APPLY_METHOD',
      `${basename(spec.file)}: the spec's method is ${name}, the release's is ${from ?? 'unknown'}`,
      'apply a release with a spec of the same method (the release folder holds its own report.json)',
    );
  }
  const unchecked = sameTransformation(saved, spec);
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
  const noted = (built: BuiltRelease): BuiltRelease => ({
    ...built,
    report: {
      ...built.report,
      details: {
        ...built.report.details,
        applied: {
          from: saved.manifest.runId,
          method: name,
          transformation: transformationFile(name),
          ...(unchecked ? { hierarchiesChecked: false } : {}),
        },
      },
    },
  });
  const note = (built: BuiltRelease, ctx: { say: (line: string) => void }): BuiltRelease => {
    if (unchecked) ctx.say(`caution: ${unchecked}`);
    return noted(built);
  };
  if (name === 'generalization') {
    const node = saved.report.generalization?.node;
    if (!node) throw damaged(saved, 'report.json has no generalization.node');
    sameNames(qis, Object.keys(node), spec, 'the saved node');
    return { name, build: (ctx) => note(buildGeneralization(ctx, node), ctx) };
  }
  if (name === 'mondrian') {
    const t = parseTransformation(
      savedFile(saved, 'transformation.json'),
      join(saved.dir, 'transformation.json'),
    );
    sameNames(
      qis,
      t.dimensions.map((d) => d.name),
      spec,
      'the saved partitions',
    );
    return { name, build: (ctx) => note(applyMondrian(ctx, t), ctx) };
  }
  if (name === 'randomization') {
    const m = parseMatricesFile(savedFile(saved, 'matrices.json'), join(saved.dir, 'matrices.json'));
    // The saved matrices, given as the spec's own: the plan validates them against the saved
    // categories and checks the privacy bound with them.
    const matrices = Object.fromEntries(
      Object.entries(m.attributes).map(([a, e]) => [a, { categories: e.categories, matrix: e.matrix }]),
    );
    // Each attribute binned as the release did, not by this table's own range; a randomized
    // one over the categories of its saved matrix.
    const domains: SavedDomains = {
      file: join(saved.dir, 'matrices.json'),
      attributes: ownRecord({
        ...Object.fromEntries(
          Object.entries(m.released ?? {}).map(([a, e]) => [a, { discretization: e.discretization }]),
        ),
        ...m.attributes,
      }),
    };
    return {
      name,
      build: (ctx) =>
        note(
          buildApplied(
            {
              ...ctx,
              spec: {
                ...ctx.spec,
                method: {
                  ...(ctx.spec.method as RandomizationMethodSpec),
                  matrices,
                  retention: undefined,
                  smallDomain: false,
                },
              },
            },
            domains,
          ),
          ctx,
        ),
    };
  }
  throw new PpdpError('E_APPLY_UNSUPPORTED', `method ${name} cannot be re-applied`, 'use ppdp release');
}

function transformationFile(method: string): string {
  return method === 'generalization'
    ? 'report.json (generalization.node)'
    : method === 'mondrian'
      ? 'transformation.json'
      : 'matrices.json';
}

/** The saved partitions on the new table; refused when a class fails a model. */
function applyMondrian(ctx: MethodContext, t: ReturnType<typeof parseTransformation>): BuiltRelease {
  const prepared = ctx.time('prepare', () => prepareMondrian(ctx.spec, ctx.table));
  const { problem } = prepared;
  const result = ctx.time('partition', () => assignBoxes(problem, t, ctx.spec.file));
  const released = releaseValues(problem, result);
  ctx.say(`${result.count} saved partitions hold the rows, ${released.classes} classes`);
  const built = releaseMondrian(ctx, prepared, { result, released, strategy: 'applied', candidates: [] });
  const failing = built.report.privacy.models.filter((m) => !m.satisfied);
  if (failing.length > 0) {
    const k = requiredK(problem.models);
    const small = released.classSizes.filter((s) => s < k).length;
    const what = failing.map((m) =>
      m.model === K_ANONYMITY.name
        ? `${small} class${small === 1 ? '' : 'es'} smaller than k=${k}`
        : `${m.model} fails (worst class: ${Object.entries(m.achieved)
            .map(([key, v]) => `${key} = ${Number(v.toPrecision(4))}`)
            .join(', ')}; needs ${Object.entries(m.params)
            .filter(([key]) => key !== 'attribute')
            .map(([key, v]) => `${key} = ${v}`)
            .join(', ')})`,
    );
    throw new NoSolutionError(
      'E_APPLY_INFEASIBLE',
      `${basename(ctx.spec.file)}: the saved partitions do not protect this table: ${what.join('; ')}`,
      'Mondrian releases suppress no rows: release the new data with `ppdp release` (a new partitioning)',
    );
  }
  return built;
}

/**
 * Refuses a spec that would change what the saved transformation does: a hierarchy whose
 * levels no longer mean what they meant (the node's level 2 would be other intervals), another
 * suppression, another seed (it keys the row shuffle and randomization's draws). Compared
 * with the spec the release's report.json records (specSummary); the suppression limit and
 * the privacy models may differ: they decide whether the new data is protected, and are checked.
 */
function sameTransformation(saved: SavedRelease, spec: ReleaseSpec): string | undefined {
  const was = saved.report.spec;
  const now = specSummary(spec);
  const file = basename(spec.file);
  const differs: string[] = [];
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying' && a.hierarchy !== undefined);
  // A release made before its report recorded hierarchies is applied as before, with a caution.
  const unchecked =
    qis.length > 0 && was.hierarchies === undefined
      ? `${saved.dir} does not record its hierarchies (made by an earlier ppdp): ${file}'s were not checked against them; if one changed, the release is not reproduced (re-run the release with this version of ppdp to have them checked)`
      : undefined;
  const names = new Set(
    was.hierarchies === undefined
      ? []
      : [...Object.keys(was.hierarchies), ...Object.keys(now.hierarchies ?? {})],
  );
  // Read as own keys: a quasi-identifier may be named `constructor` or `__proto__`.
  const before = ownRecord(was.hierarchies ?? {});
  const after = ownRecord(now.hierarchies ?? {});
  const changed = [...names].filter((n) => before[n] !== after[n]).sort();
  // A quasi-identifier taken out of the spec is named as such, not as a changed hierarchy.
  const inSpec = new Set(spec.attributes.map((a) => a.name));
  const dropped = changed.filter((n) => after[n] === undefined && !inSpec.has(n));
  const other = changed.filter((n) => !dropped.includes(n));
  if (dropped.length > 0) {
    differs.push(
      `${inWords(dropped.map((n) => `'${n}'`))} ${dropped.length === 1 ? 'is' : 'are'} no longer in the spec (the release generalized ${dropped.length === 1 ? 'it' : 'them'} as a quasi-identifier)`,
    );
  }
  if (other.length > 0) {
    differs.push(
      `the hierarch${other.length === 1 ? 'y' : 'ies'} of ${inWords(other)} differ${other.length === 1 ? 's' : ''}`,
    );
  }
  const setting = (what: string, value: unknown, was: unknown) => {
    if (was !== undefined && was !== value) differs.push(`${what} is ${value}, the release's ${was}`);
  };
  setting('the seed', now.seed, was.seed);
  setting('method.suppressed', now.suppressed, was.suppressed);
  setting('method.suppression', now.suppression, was.suppression);
  if (differs.length === 0) return unchecked;
  throw new PpdpError(
    'E_APPLY_CHANGED',
    `${file} changes the transformation of the release in ${saved.dir}: ${differs.join('; ')}`,
    `${dropped.length > 0 ? "put the release's quasi-identifiers back in the spec with their hierarchies and " : ''}apply with the settings the release was made with (its hierarchies, seed and suppression), or release the data anew with \`ppdp release\``,
  );
}

function sameNames(qis: string[], saved: string[], spec: ReleaseSpec, what: string): void {
  const a = [...qis].sort().join(', ');
  const b = [...saved].sort().join(', ');
  if (a !== b) {
    throw new PpdpError(
      'E_APPLY_SCHEMA',
      `${basename(spec.file)}: the quasi-identifiers (${a}) differ from those of ${what} (${b})`,
      'apply a release made with the same quasi-identifiers as the spec',
    );
  }
}

function damaged(saved: SavedRelease, what: string): PpdpError {
  return new PpdpError('E_APPLY_RELEASE', `${saved.dir}: ${what}`, 're-run the original release');
}
