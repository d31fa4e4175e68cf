import { CuadraError, type ToolContext } from '@cuadra/shared';
import type { PeopleStore } from '../identity/people.ts';
import type { Catalog } from '../catalog.ts';
import type { IdentityStore } from '../identity/store.ts';

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
}

/** The gateway's services from a tool context (only the gateway's own owner sets them). */
export function gatewayServices(ctx: ToolContext): GatewayServices {
  const services = ctx.services as GatewayServices | undefined;
  if (!services?.identity) throw new CuadraError('internal', 'This tool runs only in the gateway.');
  return services;
}

/** The people side of the gateway's services (members.*). */
export function peopleServices(ctx: ToolContext): Required<GatewayServices> {
  const services = gatewayServices(ctx);
  if (!services.people || !services.revokeMemberGrants || !services.publicUrl) throw new CuadraError('internal', 'This gateway has no people store.');
  return services as Required<GatewayServices>;
}
