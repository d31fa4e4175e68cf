// Build step: composes the supergraph and the tool catalog from the subgraphs' own
// declarations into gateway/generated/. A composition error fails the build (exit 1).
import { mkdirSync, writeFileSync } from 'node:fs';
import { composeSupergraph, type SubgraphSource } from '../gateway/src/compose.ts';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import { collectReads, type ReadDeclarations } from '../shared/src/index.ts';

/** Loads every subgraph's SDL and tool declarations. */
export async function loadSubgraphSources(): Promise<SubgraphSource[]> {
  return Promise.all(
    SUBGRAPHS.map(async ({ name }) => {
      const server = await import(`../subgraphs/${name}/src/server.ts`);
      const { tools } = server;
      return { name, typeDefs: server.typeDefs() as string, tools, reads: server.reads as ReadDeclarations | undefined };
    }),
  );
}

/** Writes gateway/generated/{supergraph.graphql,catalog.json}. */
export async function build(): Promise<{ tools: number }> {
  const { gatewayTools } = await import('../gateway/src/local/index.ts');
  const { withGatewayReads } = await import('../gateway/src/local/reads.ts');
  const sources = await loadSubgraphSources();
  const { supergraphSdl, catalog } = composeSupergraph(sources, gatewayTools);
  // The composite reads each subgraph declared, and the gateway's own: the gateway routes
  // records.list, metrics.query and the agenda by them, and the two tools' descriptions name what is answered today.
  const reads = withGatewayReads(collectReads(sources));
  for (const entry of catalog) {
    entry.description = entry.description
      .replace('{sources}', Object.keys(reads.sources).sort().join(', '))
      .replace('{metrics}', Object.keys(reads.metrics).sort().join(', '));
  }
  const out = new URL('../gateway/generated/', import.meta.url);
  mkdirSync(out, { recursive: true });
  writeFileSync(new URL('supergraph.graphql', out), supergraphSdl);
  writeFileSync(new URL('catalog.json', out), `${JSON.stringify({ tools: catalog, reads }, null, 2)}\n`);
  return { tools: catalog.length };
}

if (import.meta.main) {
  try {
    const { tools } = await build();
    console.log(`composed the supergraph of ${SUBGRAPHS.length} subgraphs; catalog of ${tools} tools in gateway/generated/`);
    // The tool-schema changelog: what changed since the committed snapshot, recorded for committing
    // (only here, not when the test runner builds: a test fails while the committed snapshot is stale).
    const { recordSchemaChanges } = await import('../gateway/src/versions/schema-changes.ts');
    const { buildProducts } = await import('../gateway/src/catalog.ts');
    const changes = recordSchemaChanges(buildProducts().tools, new URL('../gateway/tool-schemas/', import.meta.url).pathname);
    if (changes.length) console.log(`tool schemas: ${changes.length} change(s) (${changes.filter((c) => c.breaking).length} breaking) written to gateway/tool-schemas/CHANGELOG.md — commit it with snapshot.json`);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
