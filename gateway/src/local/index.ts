import type { Tool } from '@cuadra/shared';
import { create as createApiKey } from './api_keys/create.ts';
import { list as listApiKeys } from './api_keys/list.ts';
import { revoke as revokeApiKey } from './api_keys/revoke.ts';
import { describeTool, searchTool } from '../mcp/catalogTools.ts';
import { changeRole as changeMemberRole } from './members/change_role.ts';
import { invite as inviteMember } from './members/invite.ts';
import { list as listMembers } from './members/list.ts';
import { remove as removeMember } from './members/remove.ts';
import { create as createRole } from './roles/create.ts';
import { remove as deleteRole } from './roles/delete.ts';
import { list as listRoles } from './roles/list.ts';
import { update as updateRole } from './roles/update.ts';

/**
 * Tool modules the gateway owns itself (ARCHITECTURE.md, "Tools the gateway owns"): identity
 * (who may call) lives here, so its tools do too; and the catalog tools, which read the catalog.
 */
export const gatewayModules = ['api_keys', 'roles', 'members', 'tools'] as const;

/** The tools the gateway owns; they run through the same owning half of the pipeline as any subgraph's. */
export const gatewayTools: readonly Tool<any, any>[] = [
  createApiKey, listApiKeys, revokeApiKey,
  createRole, updateRole, deleteRole, listRoles,
  inviteMember, listMembers, changeMemberRole, removeMember,
  searchTool, describeTool,
];

/** The owner name of gateway tools in the catalog. */
export const GATEWAY_OWNER = 'gateway';
