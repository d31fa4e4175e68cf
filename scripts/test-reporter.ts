/**
 * A vitest reporter that writes where each test file's time went (to `CUADRA_TEST_DURATIONS`):
 * vitest's own per-file diagnostic — importing the file and what it imports, its hooks and tests
 * — for `npm test` to print the slowest files at the end of the run (scripts/test.ts).
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

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

/** Writes {@link FileDuration} rows to `file` when the run ends. */
export default class DurationsReporter implements Reporter {
  readonly #file: string;

  constructor(options: { file?: string } = {}) {
    this.#file = options.file ?? process.env.CUADRA_TEST_DURATIONS ?? path.join('test-output', 'durations.json');
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
