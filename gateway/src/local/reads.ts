import { CuadraError, reaches, type CatalogReads, type ListAnswer, type Principal, type RecordsQuery } from '@cuadra/shared';
import { membersSource } from './members/sources.ts';
import { rolesSource } from './roles/sources.ts';
import { GATEWAY_OWNER, type GatewayServices } from './services.ts';

/** What a reader of the gateway's own data receives: the caller, its workspace and the gateway's stores. */
export interface GatewayReadContext {
  principal: Principal;
  workspace: string;
  now: Date;
  services: GatewayServices;
}

/** A records source the gateway answers itself, from its own stores (no subgraph holds the data). */
export type GatewaySourceReader = (query: RecordsQuery, ctx: GatewayReadContext) => Promise<ListAnswer<Record<string, unknown>>>;

/**
 * The composite reads of the gateway's own tool modules, declared as a subgraph module declares
 * its `reads` (composite.ts): keyed by name, owned by the module whose read tools guard them.
 */
const gatewayModuleReads: readonly { name: string; reads: { sources: Record<string, GatewaySourceReader> } }[] = [
  { name: 'members', reads: { sources: { members: membersSource } } },
  { name: 'roles', reads: { sources: { roles: rolesSource } } },
];

/** The gateway's records sources with their owning module; a name declared twice fails at start-up and in the build. */
export const gatewaySources: Readonly<Record<string, { module: string; read: GatewaySourceReader }>> = (() => {
  const out: Record<string, { module: string; read: GatewaySourceReader }> = {};
  for (const m of gatewayModuleReads) {
    for (const [name, read] of Object.entries(m.reads.sources)) {
      if (Object.hasOwn(out, name)) throw new Error(`The source "${name}" is declared by two gateway modules.`);
      out[name] = { module: m.name, read };
    }
  }
  return out;
})();

/**
 * The subgraphs' composite reads with the gateway's own added (the build writes both into the
 * catalog). A gateway route has no graph field: the gateway reads it in process. A name a
 * subgraph answers too fails the build.
 */
export function withGatewayReads(reads: CatalogReads): CatalogReads {
  const sources = { ...reads.sources };
  for (const [name, { module }] of Object.entries(gatewaySources)) {
    if (Object.hasOwn(sources, name)) throw new Error(`The source "${name}" is declared by both ${sources[name].subgraph} and the gateway.`);
    sources[name] = { field: '', module, subgraph: GATEWAY_OWNER };
  }
  return { ...reads, sources };
}

/**
 * Reads one of the gateway's own records sources as the caller. The read guard is the subgraphs'
 * (subgraph.ts): the caller must reach a read tool of the owning module (`members.list`,
 * `roles.list`), else `policy_denied`.
 */
export async function readGatewaySource(services: GatewayServices, principal: Principal, query: RecordsQuery): Promise<ListAnswer<Record<string, unknown>>> {
  const source = Object.hasOwn(gatewaySources, query.source) ? gatewaySources[query.source] : undefined;
  if (!source) throw new CuadraError('not_found', `The records source "${query.source}" is not available yet: no module of this workspace answers it.`);
  const readTools = services.catalog.entries.filter((e) => e.module === source.module && e.risk === 'read');
  if (!readTools.some((tool) => reaches(principal, tool))) {
    throw new CuadraError('policy_denied', `This credential does not reach the ${source.module} data (records source "${query.source}").`);
  }
  return source.read(query, { principal, workspace: principal.workspace, now: new Date(), services });
}
