import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { SUBGRAPHS } from './gateway/src/subgraphs.ts';

// One project per package, so each team runs its own (`npm test -w subgraphs/crm` runs `--project crm`);
// the subgraphs come from the one list in gateway/src/subgraphs.ts.
const packages = [
  { name: 'shared', root: 'shared' },
  { name: 'gateway', root: 'gateway' },
  ...SUBGRAPHS.map((s) => ({ name: s.name, root: `subgraphs/${s.name}` })),
];

// One graphql, as in production: Node loads the package's CommonJS entry for `import 'graphql'` and
// for Apollo's `require('graphql')` alike, while Vite would pick its `module` (.mjs) entry for our own
// sources — a second copy whose schema and error classes the first does not accept ("Cannot use
// GraphQLSchema from another module or realm").
const graphqlEntry = createRequire(import.meta.url).resolve('graphql');
const resolve = { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] };

/** Seconds each test file took on the last run recorded in the repository (test/durations.json; `CUADRA_RECORD_DURATIONS=1 npm test`). */
function recordedDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(new URL('./test/durations.json', import.meta.url), 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * The order that lets both workers finish together: the system tests first, longest first (they are
 * the long files: own systems, browsers, restarts), then the many short module tests, which fill the
 * gaps to the end. A file's length is this machine's last run of it (vitest's cache) or, on a fresh
 * clone, the recorded one (test/durations.json); a file in neither (a new one) goes first among its
 * kind, as it may be long. vitest's own order on a fresh clone is by file size: it started the 48 s
 * embedded-model file 45th and `npm start`'s 35 s file 53rd of the 57 system files.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const recorded = recordedDurations();
    const root = this.ctx.config.root;
    const seconds = (f: TestSpecification): number => {
      const file = relative(root, f.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${file}`)?.duration;
      return cached !== undefined ? cached / 1000 : recorded[file] ?? Number.POSITIVE_INFINITY;
    };
    const system = sorted.filter((f) => f.project.name === 'system').map((f) => ({ f, s: seconds(f) })).sort((a, b) => b.s - a.s).map(({ f }) => f);
    return [...system, ...sorted.filter((f) => f.project.name !== 'system')];
  }
}

export default defineConfig({
  test: {
    // Two workers on the two cores; each runs one file at a time, and the system tests of a worker
    // share one system (test/helpers/system.ts, scripts/test-pool.ts). Every project runs its files
    // in one process per worker (isolate: false): a module is imported once per worker, not once per
    // file (~45 % of the non-system projects' time went to re-importing). A file restores what it
    // changes in its process (process.env, globals) and does not vi.mock modules others import.
    maxWorkers: 2,
    sequence: { sequencer: LongestFirst },
    projects: [
      ...packages.map((p) => ({
        resolve,
        test: { name: p.name, root: p.root, include: ['test/**/*.test.ts', 'src/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 120_000, isolate: false },
      })),
      // Cross-service tests: the whole system over HTTP, the system each worker shares (or a file's own).
      // test/replicas/ runs apart (`npm run test:replicas`: 16 services).
      // testTimeout is a guard against a hang, never a timing: 120 s, as the waits inside (EVENT_WAIT_MS, 60 s in
      // test/helpers/until.ts) are for events that took 1–2 s idle and several times that at load 9–14.
      { resolve, test: { name: 'system', root: 'test', include: ['**/*.test.ts'], exclude: ['replicas/**', '**/node_modules/**'], testTimeout: 120_000, hookTimeout: 180_000, isolate: false } },
    ],
  },
});
