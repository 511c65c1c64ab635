/**
 * What AWS Powertools for Lambda (logger + metrics + tracer) costs a ppdp handler (a script,
 * not a test): the same tiny handler bundled twice the way infra/bundle.ts bundles the real
 * ones (esbuild, ESM, node22, AWS SDK inside), once with the hand-written JSON log line of
 * functions/commons/runtime.ts and once with the three Powertools utilities set up as
 * functions/commons/observability.ts does; then the bundle size and the cold import time
 * (a fresh `node` per run, median of --runs), next to the cold import of the real Plan handler
 * for scale. Writes bench/results/powertools.json.
 *
 * Run: `npm run bench:powertools [-- --runs 10]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { bundleHandlers } from '../infra/bundle.ts';
import { helpIfAsked } from './help.ts';
import { machineInfo, median } from './scale.ts';
import { ROOT } from './synth.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
const runs = Number(values.runs);

/** One Powertools utility: its import, its setup and what the handler calls. */
const UTILITIES = {
  logger: [
    "import { Logger } from '@aws-lambda-powertools/logger';",
    "const logger = new Logger({ serviceName: 'ppdp' });",
    "logger.info('Bench', { state: 'Bench', outcome: 'ok', ms: 1 });",
  ],
  metrics: [
    "import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';",
    "const metrics = new Metrics({ namespace: 'ppdp', serviceName: 'ppdp' });",
    "metrics.addMetric('StateDuration', MetricUnit.Milliseconds, 1); metrics.publishStoredMetrics();",
  ],
  tracer: [
    "import { Tracer } from '@aws-lambda-powertools/tracer';",
    "const tracer = new Tracer({ serviceName: 'ppdp' });",
    'tracer.getSegment();',
  ],
} as const;
type Utility = keyof typeof UTILITIES;

const PLAIN = `
export function log(level, event) {
  const line = JSON.stringify({ level, time: new Date().toISOString(), ...event });
  if (level === 'error') console.error(line);
  else console.log(line);
}
export const handler = async () => {
  log('info', { state: 'Bench', outcome: 'ok', ms: 1 });
  return {};
};
`;

function withUtilities(used: readonly Utility[]): string {
  const part = (i: 0 | 1 | 2) => used.map((u) => UTILITIES[u][i]).join('\n');
  return `${part(0)}\n${part(1)}\nexport const handler = async () => {\n${part(2)}\nreturn {};\n};\n`;
}

const HANDLERS: Record<string, string> = {
  plain: PLAIN,
  logger: withUtilities(['logger']),
  metrics: withUtilities(['metrics']),
  tracer: withUtilities(['tracer']),
  'logger+metrics': withUtilities(['logger', 'metrics']),
  powertools: withUtilities(['logger', 'metrics', 'tracer']),
};

/** Bytes of every .mjs under dir (entry and chunks). */
function bundleBytes(dir: string): number {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.mjs'))
    .reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}

/** One cold import of a module in a fresh node, ms. */
function coldImport(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(performance.now() - t);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, PPDP_LOG: 'off', POWERTOOLS_DEV: 'false' },
  });
  if (r.status !== 0) throw new Error(`importing ${file} failed:\n${r.stderr}`);
  return Math.round(Number(r.stdout.trim().split('\n').at(-1)) * 10) / 10;
}

/**
 * `runs` cold imports of each module, taken in turns (one of each per round) so that the
 * shared machine's load changes reach every module alike; the median per module.
 */
function coldImports(files: Record<string, string>): Record<string, { medianMs: number; runsMs: number[] }> {
  const times = Object.fromEntries(Object.keys(files).map((name) => [name, [] as number[]]));
  for (let i = 0; i < runs; i++)
    for (const [name, file] of Object.entries(files)) times[name]!.push(coldImport(file));
  return Object.fromEntries(
    Object.entries(times).map(([name, t]) => [
      name,
      { medianMs: Math.round(median(t) * 10) / 10, runsMs: t },
    ]),
  );
}

const work = mkdtempSync(join(os.tmpdir(), 'ppdp-powertools-'));
try {
  const files: Record<string, string> = {};
  const bytes: Record<string, number> = {};
  for (const [name, source] of Object.entries(HANDLERS)) {
    const src = join(work, `${name}.mjs`);
    writeFileSync(src, source);
    const outdir = join(work, `out-${name}`);
    buildSync({
      entryPoints: [src],
      outdir,
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'esm',
      outExtension: { '.js': '.mjs' },
      banner: {
        js: "import { createRequire as __ppdpRequire } from 'node:module'; const require = __ppdpRequire(import.meta.url);",
      },
      logLevel: 'warning',
      nodePaths: [join(ROOT, 'node_modules')], // the sources sit in a temporary folder
    });
    files[name] = join(outdir, `${name}.mjs`);
    bytes[name] = bundleBytes(outdir);
  }
  const lambda = bundleHandlers(join(work, 'lambda'));
  files.realPlanHandler = join(lambda, 'plan.mjs');
  bytes.realPlanHandler = bundleBytes(lambda);
  const times = coldImports(files);
  const results = Object.fromEntries(
    Object.keys(HANDLERS).map((name) => [name, { bytes: bytes[name]!, ...times[name]! }]),
  );
  const plan = { bytes: bytes.realPlanHandler!, ...times.realPlanHandler! };
  const plain = results.plain!;
  const output = {
    benchmark: 'powertools',
    date: new Date().toISOString(),
    machine: machineInfo(),
    settings: {
      runs,
      bundle: 'esbuild, ESM, target node22, platform node (as infra/bundle.ts)',
      packages: ['logger', 'metrics', 'tracer'].map(
        (p) => `@aws-lambda-powertools/${p}@${packageVersion(`@aws-lambda-powertools/${p}`)}`,
      ),
      note: 'cold import = `await import(handler)` in a fresh node, outside Lambda (Powertools tracer disabled, but its modules loaded)',
    },
    handlers: results,
    added: Object.fromEntries(
      Object.entries(results)
        .filter(([name]) => name !== 'plain')
        .map(([name, r]) => [
          name,
          { bytes: r.bytes - plain.bytes, medianMs: Math.round((r.medianMs - plain.medianMs) * 10) / 10 },
        ]),
    ),
    realPlanHandler: plan,
  };
  const path = join(ROOT, 'bench/results/powertools.json');
  writeFileSync(path, `${JSON.stringify(output, null, 2)}\n`);
  const kb = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  console.log(
    [
      ...Object.entries(results).map(
        ([name, r]) => `${name.padEnd(15)} ${kb(r.bytes).padStart(10)}  cold import ${r.medianMs} ms`,
      ),
      `real Plan handler (all handlers' bundle ${kb(plan.bytes)}): cold import ${plan.medianMs} ms`,
      `wrote ${path}`,
    ].join('\n'),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

function packageVersion(name: string): string {
  return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
}
