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
import { get as getDashboard } from './dashboards/get.ts';
import { list as listDashboards } from './dashboards/list.ts';
import { patch as patchDashboard } from './dashboards/patch.ts';
import { remove as deleteDashboard } from './dashboards/delete.ts';
import { render as renderDashboard } from './dashboards/render.ts';
import { save as saveDashboard } from './dashboards/save.ts';
import { remove as deleteMetric } from './metrics/delete.ts';
import { list as listMetrics } from './metrics/list.ts';
import { query as queryMetrics } from './metrics/query.ts';
import { save as saveMetric } from './metrics/save.ts';
import { list as listRecords } from './records/list.ts';
import { get as getWorkspace } from './workspace/get.ts';

/**
 * Tool modules the gateway owns itself (ARCHITECTURE.md, "Tools the gateway owns"): identity
 * (who may call) lives here, so its tools do too; the catalog tools, which read the catalog; and the
 * canvas and composite reads (dashboards, metrics, records), served where the composed graph is.
 */
export const gatewayModules = ['api_keys', 'roles', 'members', 'tools', 'dashboards', 'metrics', 'records', 'workspace'] as const;

/** The tools the gateway owns; they run through the same owning half of the pipeline as any subgraph's. */
export const gatewayTools: readonly Tool<any, any>[] = [
  createApiKey, listApiKeys, revokeApiKey,
  createRole, updateRole, deleteRole, listRoles,
  inviteMember, listMembers, changeMemberRole, removeMember,
  searchTool, describeTool,
  saveDashboard, patchDashboard, getDashboard, listDashboards, deleteDashboard, renderDashboard,
  queryMetrics, saveMetric, listMetrics, deleteMetric, listRecords,
  getWorkspace,
];

export { GATEWAY_OWNER } from './services.ts';
