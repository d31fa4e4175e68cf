import { describe, expect, it } from 'vitest';
import { AssertionVerifier, generateSigningKeyPair, signAssertion } from '../src/credentials.ts';
import { assertReach } from '../src/invoke.ts';
import { patternCovers, patternsCover, roleReaches, rolePatternsOf, type Principal } from '../src/principal.ts';
import type { Risk } from '../src/tool.ts';

function principal(overrides: Partial<Principal> = {}): Principal {
  return { workspace: 'ws_test', role: 'billing_clerk', actor: { type: 'api_key', id: 'key_t' }, credential_id: 'key_t', scopes: null, patterns: null, ...overrides };
}
const t = (name: string, risk: Risk) => ({ name, risk, module: name.split('.')[0] });

describe('roleReaches with role_patterns (custom roles)', () => {
  it('a custom role reaches exactly its patterns', () => {
    const p = principal({ role_patterns: ['invoices.%:read', 'parties.%'] });
    expect(roleReaches(p, t('invoices.list', 'read'))).toBe(true);
    expect(roleReaches(p, t('invoices.create', 'write'))).toBe(false);
    expect(roleReaches(p, t('parties.create', 'write'))).toBe(true);
    expect(roleReaches(p, t('payroll.run', 'write'))).toBe(false);
  });

  it('a custom role without role_patterns (or with []) reaches nothing', () => {
    expect(roleReaches(principal(), t('invoices.list', 'read'))).toBe(false);
    expect(roleReaches(principal({ role_patterns: null }), t('invoices.list', 'read'))).toBe(false);
    expect(roleReaches(principal({ role_patterns: [] }), t('invoices.list', 'read'))).toBe(false);
  });

  it('role_patterns never redefine a built-in role', () => {
    const viewer = principal({ role: 'viewer', role_patterns: ['%'] });
    expect(roleReaches(viewer, t('invoices.create', 'write'))).toBe(false);
    expect(roleReaches(viewer, t('invoices.list', 'read'))).toBe(true);
    expect(rolePatternsOf(principal({ role: 'owner', role_patterns: [] }))).toEqual(['%']);
  });

  it('the customRoles argument still works when the principal carries no patterns', () => {
    expect(roleReaches(principal(), t('tasks.list', 'read'), { billing_clerk: ['tasks.%'] })).toBe(true);
    expect(roleReaches(principal({ role: '__proto__' }), t('tasks.list', 'read'))).toBe(false);
  });

  it('assertReach refuses outside the custom role with policy_denied, and key patterns still narrow', () => {
    const p = principal({ role_patterns: ['invoices.%'], patterns: ['invoices.%:read'] });
    expect(() => assertReach(p, t('invoices.list', 'read'))).not.toThrow();
    expect(() => assertReach(p, t('invoices.create', 'write'))).toThrow(expect.objectContaining({ code: 'policy_denied' }));
    expect(() => assertReach(p, t('parties.list', 'read'))).toThrow(expect.objectContaining({ code: 'policy_denied' }));
  });

  it('role_patterns travel in the assertion, and their absence stays null', () => {
    const { privateKey, publicKey } = generateSigningKeyPair();
    const verifier = new AssertionVerifier(publicKey);
    const custom = verifier.verify(signAssertion(principal({ role_patterns: ['parties.%:read'] }), privateKey));
    expect(custom.role_patterns).toEqual(['parties.%:read']);
    expect(roleReaches(custom, t('parties.list', 'read'))).toBe(true);
    expect(roleReaches(custom, t('invoices.list', 'read'))).toBe(false);
    const builtIn = verifier.verify(signAssertion(principal({ role: 'viewer' }), privateKey));
    expect(builtIn.role_patterns ?? null).toBeNull();
  });
});

describe('patternCovers (what a granter may hand out)', () => {
  it('is sound for the usual shapes', () => {
    expect(patternCovers('%', 'invoices.%')).toBe(true);
    expect(patternCovers('%', 'invoices.%:read')).toBe(true);
    expect(patternCovers('invoices.%', 'invoices.%:read')).toBe(true);
    expect(patternCovers('invoices.%', 'invoices.list')).toBe(true);
    expect(patternCovers('invoices.%:read', 'invoices.%')).toBe(false);
    expect(patternCovers('%:read', 'invoices.%')).toBe(false);
    expect(patternCovers('%:read', 'invoices.%:read')).toBe(true);
    expect(patternCovers('invoices.%', '%')).toBe(false);
    expect(patternCovers('invoices.l%', 'invoices.%')).toBe(false);
    expect(patternCovers('invoices.%', 'invoices_x.%')).toBe(false);
  });

  it('patternsCover needs every inner pattern covered', () => {
    expect(patternsCover(['%:read', 'invoices.%'], ['invoices.%', 'parties.%:read'])).toBe(true);
    expect(patternsCover(['%:read', 'invoices.%'], ['invoices.%', 'parties.%'])).toBe(false);
  });
});
