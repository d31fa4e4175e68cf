import { BUILT_IN_ROLES, type Principal } from '@cuadra/shared';
import { describe, expect, it } from 'vitest';
import { mayGrant } from '../src/identity/roles.ts';

const as = (role: string, role_patterns?: string[]): Principal => ({
  workspace: 'ws_t', role, actor: { type: 'api_key', id: 'key_t' }, credential_id: 'key_t', scopes: null, patterns: null, ...(role_patterns ? { role_patterns } : {}),
});

describe('mayGrant: nobody hands out more than their own role', () => {
  it('owner only by an owner; built-in roles by rank', () => {
    expect(mayGrant(as('owner'), 'owner', BUILT_IN_ROLES.owner)).toBe(true);
    expect(mayGrant(as('admin'), 'owner', BUILT_IN_ROLES.owner)).toBe(false);
    expect(mayGrant(as('admin'), 'admin', BUILT_IN_ROLES.admin)).toBe(true);
    expect(mayGrant(as('accountant'), 'admin', BUILT_IN_ROLES.admin)).toBe(false);
    expect(mayGrant(as('accountant'), 'viewer', BUILT_IN_ROLES.viewer)).toBe(true);
    // A custom role with '%' still never grants owner.
    expect(mayGrant(as('super', ['%']), 'owner', BUILT_IN_ROLES.owner)).toBe(false);
  });

  it('custom roles on either side: the granted patterns must be covered by the granter’s', () => {
    expect(mayGrant(as('admin'), 'clerk', ['invoices.%'])).toBe(true);
    expect(mayGrant(as('viewer'), 'clerk', ['invoices.%:read'])).toBe(true);
    expect(mayGrant(as('viewer'), 'clerk', ['invoices.%'])).toBe(false);
    expect(mayGrant(as('maker', ['api_keys.%', 'parties.%:read']), 'viewer', BUILT_IN_ROLES.viewer)).toBe(false);
    expect(mayGrant(as('maker', ['api_keys.%', 'parties.%']), 'reader', ['parties.%:read'])).toBe(true);
    // A custom role the gateway resolved to nothing grants nothing but an empty role.
    expect(mayGrant(as('ghost', []), 'reader', ['parties.%:read'])).toBe(false);
    expect(mayGrant(as('ghost'), 'reader', ['parties.%:read'])).toBe(false);
  });
});
