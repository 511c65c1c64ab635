/**
 * Prints, after vitest's summary, one line per suite skipped for a missing resource (the tests
 * test/helpers/requires.ts marks with `meta.needs`), naming the file and what would enable it,
 * and, for the fast tier, how many suites it left to `npm run test:all`.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export interface SkipsReporterOptions {
  /** The test files this run's tier leaves out (the fast tier: the slow ones). */
  readonly notRun?: readonly string[];
}

export default class SkipsReporter implements Reporter {
  constructor(private readonly options: SkipsReporterOptions = {}) {}

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines = new Set<string>();
    for (const module of modules) {
      const file = relative(module.project.config.root, module.moduleId);
      for (const test of module.children.allTests()) {
        const needs = test.meta().needs;
        if (needs !== undefined && test.result().state === 'skipped') lines.add(`skipped ${file}: ${needs}`);
      }
    }
    const notRun = this.options.notRun ?? [];
    if (lines.size === 0 && notRun.length === 0) return;
    process.stdout.write('\n');
    for (const line of lines) process.stdout.write(`${line}\n`);
    if (notRun.length > 0)
      process.stdout.write(
        `not run by npm test: ${notRun.length} slow or end-to-end suites (npm run test:all runs every suite)\n`,
      );
  }
}
