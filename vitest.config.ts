import { createRequire } from 'node:module';
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

/**
 * vitest's order (by project, then the longest first by the last run's durations, else the largest
 * file first), with the system tests first: they are the long files (own systems, browsers, restarts),
 * and the many short module tests after them keep both workers busy to the end. On a fresh clone there
 * are no durations yet, and a long file sorted last by size would run alone at the end.
 */
class SystemTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter((f) => f.project.name === 'system'), ...sorted.filter((f) => f.project.name !== 'system')];
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
    sequence: { sequencer: SystemTestsFirst },
    projects: [
      ...packages.map((p) => ({
        resolve,
        test: { name: p.name, root: p.root, include: ['test/**/*.test.ts', 'src/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 120_000, isolate: false },
      })),
      // Cross-service tests: the whole system over HTTP, the system each worker shares (or a file's own).
      { resolve, test: { name: 'system', root: 'test', include: ['**/*.test.ts'], testTimeout: 60_000, hookTimeout: 180_000, isolate: false } },
    ],
  },
});
