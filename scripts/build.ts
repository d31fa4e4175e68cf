// Build step: composes the supergraph and the tool catalog from the subgraphs' own
// declarations into gateway/generated/. A composition error fails the build (exit 1).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SubgraphSource } from '../gateway/src/compose.ts';
import { SUBGRAPHS } from '../gateway/src/subgraphs.ts';
import type { ReadDeclarations } from '../shared/src/index.ts';

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

const root = fileURLToPath(new URL('..', import.meta.url));
const generated = new URL('../gateway/generated/', import.meta.url);
const OUTPUTS = ['supergraph.graphql', 'catalog.json'];
// What the outputs are made of: every file the composition imports or reads from this tree (the
// services' code and SDL, the gateway's and the shared library's), this script, the locked
// dependencies and the Node version. Tool declarations and SDL read no environment.
const INPUT_DIRS = ['shared/src', 'gateway/src', ...SUBGRAPHS.flatMap(({ name }) => [`subgraphs/${name}/src`])];
const INPUT_FILES = ['scripts/build.ts', 'package.json', 'package-lock.json', ...SUBGRAPHS.flatMap(({ name }) => [`subgraphs/${name}/schema.graphql`, `subgraphs/${name}/package.json`])];

/** SHA-256 over the build's inputs (each file's path and content, in path order). */
export function buildInputsDigest(): string {
  const files = [
    ...INPUT_DIRS.flatMap((dir) => readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)))),
    ...INPUT_FILES.filter((f) => existsSync(path.join(root, f))),
  ].sort();
  const hash = createHash('sha256').update(`node ${process.version}\0`);
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(path.join(root, file))).update('\0');
  return hash.digest('hex');
}

/**
 * Writes gateway/generated/{supergraph.graphql,catalog.json}, and beside them the digest of the inputs
 * they were made from. With `ifChanged` (`npm start`), outputs made from the same inputs are kept as
 * they are: a start after the first, or after `npm test` built, composes nothing (~4 CPU-seconds).
 */
export async function build(options: { ifChanged?: boolean } = {}): Promise<{ tools: number; reused: boolean }> {
  const digest = buildInputsDigest();
  const digestFile = new URL('inputs.sha256', generated);
  if (options.ifChanged && OUTPUTS.every((f) => existsSync(new URL(f, generated))) && existsSync(digestFile) && readFileSync(digestFile, 'utf8').trim() === digest) {
    return { tools: (JSON.parse(readFileSync(new URL('catalog.json', generated), 'utf8')) as { tools: unknown[] }).tools.length, reused: true };
  }
  // The composition and the shared library are loaded only to compose: a start that reuses the
  // outputs (\`npm start\` after the first) never loads them.
  const { composeSupergraph } = await import('../gateway/src/compose.ts');
  const { collectReads, compileEveryInput } = await import('../shared/src/index.ts');
  const { gatewayTools } = await import('../gateway/src/local/index.ts');
  const { withGatewayReads } = await import('../gateway/src/local/reads.ts');
  const sources = await loadSubgraphSources();
  // A schema ajv rejects fails the build: the services compile a tool's schema only at its first call.
  for (const source of sources) compileEveryInput(source.tools);
  compileEveryInput(gatewayTools);
  const { supergraphSdl, catalog } = composeSupergraph(sources, gatewayTools);
  // The composite reads each subgraph declared, and the gateway's own: the gateway routes
  // records.list, metrics.query and the agenda by them, and the two tools' descriptions name what is answered today.
  const reads = withGatewayReads(collectReads(sources));
  for (const entry of catalog) {
    entry.description = entry.description
      .replace('{sources}', Object.keys(reads.sources).sort().join(', '))
      .replace('{metrics}', Object.keys(reads.metrics).sort().join(', '));
  }
  mkdirSync(generated, { recursive: true });
  // No digest while the outputs are rewritten: outputs cut short by a crash are never taken as made.
  rmSync(digestFile, { force: true });
  // Each written beside and renamed in: a gateway starting meanwhile (a test run's, while a run inside it
  // composes the same outputs: test/killed-run.test.ts) reads the old file or the new one, never half of one.
  const writeWhole = (file: URL, text: string) => {
    const partial = new URL(`${path.basename(fileURLToPath(file))}.${process.pid}.partial`, generated);
    writeFileSync(partial, text);
    renameSync(partial, file);
  };
  writeWhole(new URL('supergraph.graphql', generated), supergraphSdl);
  writeWhole(new URL('catalog.json', generated), `${JSON.stringify({ tools: catalog, reads }, null, 2)}\n`);
  writeWhole(digestFile, `${digest}\n`);
  return { tools: catalog.length, reused: false };
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
