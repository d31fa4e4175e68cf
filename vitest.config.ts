import { defineConfig } from 'vitest/config';
import { SUBGRAPHS } from './gateway/src/subgraphs.ts';

// One project per package, so each team runs its own (`npm test -w subgraphs/crm` runs `--project crm`);
// the subgraphs come from the one list in gateway/src/subgraphs.ts.
const packages = [
  { name: 'shared', root: 'shared' },
  { name: 'gateway', root: 'gateway' },
  ...SUBGRAPHS.map((s) => ({ name: s.name, root: `subgraphs/${s.name}` })),
];

export default defineConfig({
  test: {
    projects: [
      ...packages.map((p) => ({
        test: { name: p.name, root: p.root, include: ['test/**/*.test.ts', 'src/**/*.test.ts'], testTimeout: 30_000, hookTimeout: 120_000 },
      })),
      // Cross-service tests: the whole system over HTTP, one system per file. Files run one at
      // a time (the machine has 2 cores and each file starts six Node processes).
      { test: { name: 'system', root: 'test', include: ['**/*.test.ts'], testTimeout: 60_000, hookTimeout: 180_000, fileParallelism: false } },
    ],
  },
});
