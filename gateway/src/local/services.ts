import { CuadraError, type ToolContext } from '@cuadra/shared';
import type { IdentityStore } from '../identity/store.ts';

/** What the gateway gives the tools it owns itself. */
export interface GatewayServices {
  identity: IdentityStore;
}

/** The gateway's services from a tool context (only the gateway's own owner sets them). */
export function gatewayServices(ctx: ToolContext): GatewayServices {
  const services = ctx.services as GatewayServices | undefined;
  if (!services?.identity) throw new CuadraError('internal', 'This tool runs only in the gateway.');
  return services;
}
