import { composeServices } from '@apollo/composition';
import { assertSecretFieldsDeclared, catalogEntry, type CatalogEntry, type Tool } from '@cuadra/shared';
import { parse } from 'graphql';

/** What the build needs from one subgraph package. */
export interface SubgraphSource {
  name: string;
  typeDefs: string;
  tools: readonly Tool<any, any>[];
}

/** The build's products: the supergraph SDL and the tool catalog, both from the subgraphs' own declarations. */
export interface BuildOutput {
  supergraphSdl: string;
  catalog: CatalogEntry[];
}

/**
 * Composes the supergraph (Apollo Federation 2) and the tool catalog. Throws with every
 * composition error, on a tool name claimed by two subgraphs, and on any field named like a secret
 * that its tool does not declare secret (CONTRACT.md §10; the rule is in shared/src/secrets.ts).
 */
export function composeSupergraph(sources: readonly SubgraphSource[], gatewayTools: readonly Tool<any, any>[] = []): BuildOutput {
  const services = sources.map((s) => {
    try {
      return { name: s.name, typeDefs: parse(s.typeDefs), url: `http://${s.name}:4000/graphql` };
    } catch (err) {
      throw new Error(`Supergraph composition failed:\n- subgraph ${s.name}: ${(err as Error).message}`);
    }
  });
  const result = composeServices(services);
  if (result.errors && result.errors.length > 0) {
    throw new Error(`Supergraph composition failed:\n${result.errors.map((e) => `- ${e.message}`).join('\n')}`);
  }
  const catalog: CatalogEntry[] = [];
  const owner = new Map<string, string>();
  for (const source of sources) {
    for (const tool of source.tools) {
      const previous = owner.get(tool.name);
      if (previous) throw new Error(`Tool ${tool.name} is declared by both ${previous} and ${source.name}.`);
      owner.set(tool.name, source.name);
      catalog.push(catalogEntry(tool, source.name));
    }
  }
  for (const tool of gatewayTools) {
    const previous = owner.get(tool.name);
    if (previous) throw new Error(`Tool ${tool.name} is declared by both ${previous} and the gateway.`);
    owner.set(tool.name, 'gateway');
    catalog.push(catalogEntry(tool, 'gateway'));
  }
  catalog.sort((a, b) => a.name.localeCompare(b.name));
  assertSecretFieldsDeclared(catalog);
  return { supergraphSdl: result.supergraphSdl!, catalog };
}
