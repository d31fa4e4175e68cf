import { CuadraError, type ToolContext } from '@cuadra/shared';
import type { PeopleStore } from '../identity/people.ts';
import type { Catalog } from '../catalog.ts';
import type { IdentityStore } from '../identity/store.ts';
import type { GraphRunner } from '../canvas/routes.ts';
import type { DashboardStore } from '../canvas/store.ts';
import type { Principal } from '@cuadra/shared';

/** What the gateway gives the tools it owns itself. */
export interface GatewayServices {
  identity: IdentityStore;
  /** The tool catalog (tools.search, tools.describe). */
  catalog: Catalog;
  /** People and memberships (members.*); absent only in a gateway built without the OAuth side. */
  people?: PeopleStore;
  /** Revokes a person's OAuth grants in a workspace (members.remove). */
  revokeMemberGrants?: (workspace: string, user: string) => Promise<number>;
  /** Base URL for links handed out (invitation links). */
  publicUrl?: string;
  /** Stored dashboards (dashboards.*); absent in a gateway built without the canvas. */
  dashboards?: DashboardStore;
  /** Runs a GraphQL operation on the composed graph as a principal (metrics.query, records.list, dashboards.render). */
  graph?: GraphRunner;
  /** Runs a read tool through the pipeline as a principal (result blocks). */
  invokeRead?: (principal: Principal, tool: string, input: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

/** The gateway's services from a tool context (only the gateway's own owner sets them). */
export function gatewayServices(ctx: Pick<ToolContext, 'services'>): GatewayServices {
  const services = ctx.services as GatewayServices | undefined;
  if (!services?.identity) throw new CuadraError('internal', 'This tool runs only in the gateway.');
  return services;
}

/** The people side of the gateway's services (members.*). */
export function peopleServices(ctx: Pick<ToolContext, 'services'>): Required<GatewayServices> {
  const services = gatewayServices(ctx);
  if (!services.people || !services.revokeMemberGrants || !services.publicUrl) throw new CuadraError('internal', 'This gateway has no people store.');
  return services as Required<GatewayServices>;
}

/** The canvas side of the gateway's services (dashboards.*, metrics.query, records.list). */
export function canvasServices(ctx: Pick<ToolContext, 'services'>): GatewayServices & Required<Pick<GatewayServices, 'dashboards' | 'graph' | 'invokeRead'>> {
  const services = gatewayServices(ctx);
  if (!services.dashboards || !services.graph || !services.invokeRead) throw new CuadraError('internal', 'This gateway has no canvas services.');
  return services as GatewayServices & Required<Pick<GatewayServices, 'dashboards' | 'graph' | 'invokeRead'>>;
}

/** The owner name of gateway tools (and of the gateway's own records sources) in the catalog. */
export const GATEWAY_OWNER = 'gateway';
