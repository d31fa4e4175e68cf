/**
 * A vitest reporter that writes where each test file's time went (to `CUADRA_TEST_DURATIONS`):
 * vitest's own per-file diagnostic — importing the file and what it imports, its hooks and tests
 * — for `npm test` to print the slowest files at the end of the run (scripts/test.ts).
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule, TestSpecification } from 'vitest/node';
import { askTestPool, testPoolUrl } from './test-pool.ts';

/** One test file's durations, in milliseconds. */
export interface FileDuration {
  file: string;
  project: string;
  state: string;
  tests: number;
  /** Everything below, end to end in its worker. */
  total: number;
  /** Importing the file and everything it imports, and running its `describe` bodies. */
  import: number;
  /** Hooks and tests (a `beforeAll` that starts a system counts here). */
  run: number;
  /** The worker's environment and test harness for this file. */
  harness: number;
}

/**
 * Writes {@link FileDuration} rows to `file` when the run ends, and tells the test pool
 * (`CUADRA_TEST_POOL`) when the last system test file has ended: the module tests after them need
 * no system, so the pool stops the idle ones instead of keeping them busy with their timers.
 */
export default class DurationsReporter implements Reporter {
  readonly #file: string;
  #systemFilesLeft = 0;

  constructor(options: { file?: string } = {}) {
    this.#file = options.file ?? process.env.CUADRA_TEST_DURATIONS ?? path.join('test-output', 'durations.json');
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.#systemFilesLeft = specifications.filter((s) => s.project.name === 'system').length;
  }

  onTestModuleEnd(module: TestModule): void {
    if (module.project.name !== 'system' || --this.#systemFilesLeft !== 0 || !testPoolUrl()) return;
    // Nothing waits on it: at worst the systems idle to the end, as they did before.
    void askTestPool('systems/done').catch(() => undefined);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows: FileDuration[] = modules.map((m) => {
      const d = m.diagnostic();
      const harness = d.environmentSetupDuration + d.prepareDuration + d.setupDuration;
      return {
        file: path.relative(process.cwd(), m.moduleId),
        project: m.project.name,
        state: m.state(),
        tests: [...m.children.allTests()].length,
        total: harness + d.collectDuration + d.duration,
        import: d.collectDuration,
        run: d.duration,
        harness,
      };
    });
    mkdirSync(path.dirname(this.#file), { recursive: true });
    writeFileSync(this.#file, `${JSON.stringify(rows, null, 1)}\n`);
  }
}
