import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

// `npm run test:replicas` (test/replicas/run.ts): the replicas test alone, outside `npm test` — it
// runs 14 subgraph processes and two gateways. The same graphql alias as the root config.
const graphqlEntry = createRequire(import.meta.url).resolve('graphql');

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
  test: { root: new URL('.', import.meta.url).pathname, include: ['*.test.ts'], testTimeout: 180_000, hookTimeout: 300_000, maxWorkers: 1 },
});
