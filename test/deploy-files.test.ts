import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import { deployFiles, fillParts, generatedParts } from '../scripts/deploy-files.ts';
import { repoRoot } from '../scripts/infra.ts';

// Subgraph names, ports, the compose services and the gateway image's manifests come from one
// list (gateway/src/subgraphs.ts). These checks need no running system.
describe('deployment files from the one list of subgraphs', () => {
  it('docker-compose.yml and gateway/Dockerfile are what scripts/deploy-files.ts writes', () => {
    for (const [file, [current, expected]] of Object.entries(deployFiles())) {
      expect(current, `${file} is stale: run node scripts/deploy-files.ts`).toBe(expected);
    }
  });

  it('a subgraph added to the list gets its service, its address everywhere and its manifest in the gateway image', () => {
    const list = [...SUBGRAPHS, { name: 'finance', port: 4199 }];
    const compose = readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8');
    const filled = fillParts('docker-compose.yml', compose, generatedParts(list)['docker-compose.yml']);
    expect(filled).toContain('  finance:\n    <<: *subgraph\n    build: { context: ., dockerfile: subgraphs/Dockerfile, args: { SUBGRAPH: finance } }');
    expect(filled).toContain('MONGO_DB: cuadra_finance }');
    expect(filled.match(/SUBGRAPH_FINANCE_URL: http:\/\/finance:4000/g)).toHaveLength(2);
    expect(filled).toContain('      finance: { condition: service_started }');
    const dockerfile = readFileSync(path.join(repoRoot, 'gateway/Dockerfile'), 'utf8');
    expect(fillParts('gateway/Dockerfile', dockerfile, generatedParts(list)['gateway/Dockerfile'])).toContain('COPY subgraphs/finance/package.json subgraphs/finance/');
    expect(() => fillParts('x', 'no markers here', { services: [] })).toThrow(/markers/);
  });

  it('every subgraph of the list is an npm workspace with a vitest project, ports distinct', async () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] };
    const { default: config } = await import('../vitest.config.ts');
    const projects = (config as { test: { projects: { test: { name: string } }[] } }).test.projects.map((p) => p.test.name);
    for (const s of SUBGRAPHS) {
      expect(pkg.workspaces).toContain(`subgraphs/${s.name}`);
      expect(projects).toContain(s.name);
    }
    expect(new Set(SUBGRAPHS.map((s) => s.port)).size).toBe(SUBGRAPHS.length);
  });
});
