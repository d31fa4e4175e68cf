import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
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

export default defineConfig({
  test: {
    projects: [
      ...packages.map((p) => ({
        resolve,
        test: { name: p.name, root: p.root, include: ['test/**/*.test.ts', 'src/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 120_000 },
      })),
      // Cross-service tests: the whole system over HTTP, one system per file. Files run one at
      // a time (the machine has 2 cores and each file starts six Node processes).
      { resolve, test: { name: 'system', root: 'test', include: ['**/*.test.ts'], testTimeout: 60_000, hookTimeout: 180_000, fileParallelism: false } },
    ],
  },
});
