import { CuadraError, DATE_TIME_SCHEMA as DATE_TIME, type Principal } from '@cuadra/shared';
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

const INVITATION_ID = { type: 'string', pattern: '^ivt_' } as const;

/** JSON Schema of an active member as `members.list` shows one (PeopleStore.members, status "active"). */
export const ACTIVE_MEMBER_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['user_id', 'email', 'name', 'role', 'joined_at', 'status'],
  properties: { user_id: userId, email: { type: 'string' }, name: { type: 'string' }, role: roleField, joined_at: DATE_TIME, status: { const: 'active' } },
} as const;

/** JSON Schema of a pending invitation as `members.list` shows one (PeopleStore.pendingInvitations, status "invited"). */
export const INVITED_MEMBER_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['invitation_id', 'email', 'name', 'role', 'invited_at', 'expires_at', 'user_id', 'status'],
  properties: {
    invitation_id: INVITATION_ID, email: { type: 'string' }, name: { type: ['string', 'null'] }, role: roleField,
    invited_at: DATE_TIME, expires_at: DATE_TIME, user_id: { type: 'null' }, status: { const: 'invited' },
  },
} as const;

/** JSON Schema of the invitation `members.invite` answers (the link is beside it, a secret). */
export const INVITATION_SCHEMA = {
  type: 'object', additionalProperties: false,
  required: ['invitation_id', 'email', 'name', 'role', 'status', 'expires_at'],
  properties: { invitation_id: INVITATION_ID, email: { type: 'string' }, name: { type: ['string', 'null'] }, role: roleField, status: { const: 'invited' }, expires_at: DATE_TIME },
} as const;
