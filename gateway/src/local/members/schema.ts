import { CuadraError, type Principal } from '@cuadra/shared';
import { mayGrant, ROLE_KEY, type RoleStore } from '../../identity/roles.ts';

export const userId = { type: 'string', pattern: '^usr_[A-Za-z0-9_-]{1,40}$' } as const;
export const roleField = { type: 'string', pattern: ROLE_KEY.source } as const;

/** The patterns of a role that must exist in the workspace (`invalid_input` at `/role` otherwise). */
export async function existingRole(roles: RoleStore, workspace: string, role: string): Promise<string[]> {
  const patterns = await roles.patternsFor(workspace, role);
  if (!patterns) throw new CuadraError('invalid_input', `No role "${role}" exists in this workspace (roles.list shows them).`, { field: '/role' });
  return patterns;
}

/** Refuses (`policy_denied`) to grant a role above the caller's own. */
export function assertMayGrant(principal: Principal, role: string, patterns: readonly string[]): void {
  if (!mayGrant(principal, role, patterns)) throw new CuadraError('policy_denied', `Your role "${principal.role}" cannot grant the role "${role}": it reaches more than yours.`);
}

/** Refuses (`policy_denied`) to act on a member whose role is above the caller's own. */
export async function assertMayManage(roles: RoleStore, principal: Principal, workspace: string, currentRole: string): Promise<void> {
  const patterns = (await roles.patternsFor(workspace, currentRole)) ?? [];
  if (!mayGrant(principal, currentRole, patterns)) throw new CuadraError('policy_denied', `Your role "${principal.role}" cannot manage a member whose role is "${currentRole}".`);
}
