import type { Tool } from '@cuadra/shared';
import { create as createApiKey } from './api_keys/create.ts';
import { list as listApiKeys } from './api_keys/list.ts';
import { revoke as revokeApiKey } from './api_keys/revoke.ts';

/**
 * Tool modules the gateway owns itself (ARCHITECTURE.md, "Tools the gateway owns"): identity
 * (who may call) lives here, so its tools do too.
 */
export const gatewayModules = ['api_keys'] as const;

/** The tools the gateway owns; they run through the same owning half of the pipeline as any subgraph's. */
export const gatewayTools: readonly Tool<any, any>[] = [createApiKey, listApiKeys, revokeApiKey];

/** The owner name of gateway tools in the catalog. */
export const GATEWAY_OWNER = 'gateway';
