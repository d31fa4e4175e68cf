import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_ROLES, TOOL_PATTERN, anyPatternMatches, keyPatternsReach, patternMatches, roleReaches, scopesReach, type Principal,
} from '../src/principal.ts';
import type { Risk } from '../src/tool.ts';

function principal(overrides: Partial<Principal> = {}): Principal {
  return {
    workspace: 'ws_test',
    role: 'owner',
    actor: { type: 'api_key', id: 'key_test' },
    credential_id: 'key_test',
    scopes: null,
    patterns: null,
    ...overrides,
  };
}

const t = (name: string, risk: Risk) => ({ name, risk });

describe('patternMatches', () => {
  it('invoices.% selects every invoices tool, of any risk, and nothing else', () => {
    expect(patternMatches('invoices.%', t('invoices.list', 'read'))).toBe(true);
    expect(patternMatches('invoices.%', t('invoices.create', 'write'))).toBe(true);
    expect(patternMatches('invoices.%', t('invoices.send', 'external'))).toBe(true);
    expect(patternMatches('invoices.%', t('invoices.void', 'destructive'))).toBe(true);
    expect(patternMatches('invoices.%', t('payments.list', 'read'))).toBe(false);
    expect(patternMatches('invoices.%', t('invoices_archive.list', 'read'))).toBe(false);
    expect(patternMatches('invoices.%', t('xinvoices.list', 'read'))).toBe(false);
  });

  it('%:read selects every read tool and no other risk', () => {
    expect(patternMatches('%:read', t('invoices.list', 'read'))).toBe(true);
    expect(patternMatches('%:read', t('parties.get', 'read'))).toBe(true);
    expect(patternMatches('%:read', t('invoices.create', 'write'))).toBe(false);
    expect(patternMatches('%:read', t('invoices.send', 'external'))).toBe(false);
    expect(patternMatches('%:read', t('invoices.void', 'destructive'))).toBe(false);
  });

  it('invoices.%:read selects only the read tools of invoices', () => {
    expect(patternMatches('invoices.%:read', t('invoices.list', 'read'))).toBe(true);
    expect(patternMatches('invoices.%:read', t('invoices.create', 'write'))).toBe(false);
    expect(patternMatches('invoices.%:read', t('parties.list', 'read'))).toBe(false);
  });

  it('a :<risk> suffix narrows to exactly that risk', () => {
    for (const risk of ['read', 'write', 'external', 'destructive'] as const) {
      for (const other of ['read', 'write', 'external', 'destructive'] as const) {
        expect(patternMatches(`invoices.%:${risk}`, t('invoices.x', other))).toBe(risk === other);
      }
    }
  });

  it('% selects every tool', () => {
    expect(patternMatches('%', t('invoices.list', 'read'))).toBe(true);
    expect(patternMatches('%', t('agents.delete', 'destructive'))).toBe(true);
    expect(patternMatches('%', t('a.b.c', 'write'))).toBe(true);
  });

  it('an exact name selects that tool only', () => {
    expect(patternMatches('invoices.list', t('invoices.list', 'read'))).toBe(true);
    expect(patternMatches('invoices.list', t('invoices.list_all', 'read'))).toBe(false);
    expect(patternMatches('invoices.list', t('invoices.lis', 'read'))).toBe(false);
    expect(patternMatches('invoices.list', t('my_invoices.list', 'read'))).toBe(false);
    expect(patternMatches('invoices.list:write', t('invoices.list', 'read'))).toBe(false);
  });

  it('does not read regex metacharacters in a pattern', () => {
    // "." is a literal dot, not "any character".
    expect(patternMatches('invoices.list', t('invoicesXlist', 'read'))).toBe(false);
    expect(patternMatches('invoices.%', t('invoicesX.list', 'read'))).toBe(false);
    expect(patternMatches('%.list', t('invoices_list', 'read'))).toBe(false);
    // Other metacharacters are literal too (and never make an invalid regex).
    expect(patternMatches('invoices.l*', t('invoices.llll', 'read'))).toBe(false);
    expect(patternMatches('invoices.l+', t('invoices.lll', 'read'))).toBe(false);
    expect(patternMatches('invoices.(list|get)', t('invoices.get', 'read'))).toBe(false);
    expect(patternMatches('[a-z]%', t('invoices.list', 'read'))).toBe(false);
    expect(patternMatches('invoices.lis?', t('invoices.lis', 'read'))).toBe(false);
    expect(patternMatches('^invoices.list$', t('invoices.list', 'read'))).toBe(false);
    expect(() => patternMatches('invoices.(', t('invoices.list', 'read'))).not.toThrow();
  });

  it('% matches a run of characters in the middle of a pattern', () => {
    expect(patternMatches('invoices.%_draft', t('invoices.delete_draft', 'destructive'))).toBe(true);
    expect(patternMatches('invoices.%_draft', t('invoices.delete', 'destructive'))).toBe(false);
  });

  it('anyPatternMatches is true when one pattern selects the tool', () => {
    expect(anyPatternMatches(['parties.%', 'invoices.%:read'], t('invoices.list', 'read'))).toBe(true);
    expect(anyPatternMatches(['parties.%', 'invoices.%:read'], t('invoices.create', 'write'))).toBe(false);
    expect(anyPatternMatches([], t('invoices.list', 'read'))).toBe(false);
  });

  it('TOOL_PATTERN accepts the documented shapes and refuses others', () => {
    for (const ok of ['invoices.%', '%:read', 'invoices.%:read', '%', 'invoices.list', 'invoices.void:destructive']) expect(TOOL_PATTERN.test(ok)).toBe(true);
    for (const bad of ['Invoices.%', 'invoices.*', '%:dangerous', 'invoices.%:', '', 'a b']) expect(TOOL_PATTERN.test(bad)).toBe(false);
  });
});

describe('roleReaches, for each built-in role', () => {
  const read = t('invoices.list', 'read');
  const write = t('invoices.create', 'write');
  const external = t('invoices.send', 'external');
  const destructive = t('invoices.void', 'destructive');
  // A module outside every non-admin role's write list.
  const apiKeysCreate = t('api_keys.create', 'write');
  const apiKeysRevoke = t('api_keys.revoke', 'destructive');
  const policiesUpdate = t('policies.update', 'write');

  const expected: Record<string, [boolean, boolean, boolean, boolean, boolean, boolean, boolean]> = {
    //           read  write external destructive api_keys.create api_keys.revoke policies.update
    owner: [true, true, true, true, true, true, true],
    admin: [true, true, true, true, true, true, true],
    accountant: [true, true, true, true, false, false, false],
    member: [true, true, false, false, false, false, false],
    viewer: [true, false, false, false, false, false, false],
    agent: [true, true, true, true, false, false, false],
  };

  it('covers exactly the six built-in roles', () => {
    expect(Object.keys(BUILT_IN_ROLES).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))('%s', (role, answers) => {
    const p = principal({ role });
    const got = [read, write, external, destructive, apiKeysCreate, apiKeysRevoke, policiesUpdate].map((tool) => roleReaches(p, tool));
    expect(got).toEqual(answers);
  });

  it('member writes crm and projects tools but not payroll', () => {
    const p = principal({ role: 'member' });
    expect(roleReaches(p, t('parties.create', 'write'))).toBe(true);
    expect(roleReaches(p, t('tasks.update', 'write'))).toBe(true);
    expect(roleReaches(p, t('parties.delete', 'destructive'))).toBe(false);
    expect(roleReaches(p, t('payroll.run', 'write'))).toBe(false);
  });

  it('accountant reaches payroll but not projects writes', () => {
    const p = principal({ role: 'accountant' });
    expect(roleReaches(p, t('payroll.run', 'write'))).toBe(true);
    expect(roleReaches(p, t('projects.create', 'write'))).toBe(false);
    expect(roleReaches(p, t('projects.list', 'read'))).toBe(true);
  });

  it('agent never reaches approvals.decide (an agent never decides any approval)', () => {
    const p = principal({ role: 'agent' });
    expect(roleReaches(p, t('approvals.decide', 'write'))).toBe(false);
    expect(roleReaches(p, t('approvals.list', 'read'))).toBe(true);
  });

  it('a custom role is a set of patterns', () => {
    const custom = { bookkeeper: ['invoices.%:read', 'payments.%'] };
    const p = principal({ role: 'bookkeeper' });
    expect(roleReaches(p, t('invoices.list', 'read'), custom)).toBe(true);
    expect(roleReaches(p, t('invoices.create', 'write'), custom)).toBe(false);
    expect(roleReaches(p, t('payments.record', 'write'), custom)).toBe(true);
    expect(roleReaches(p, t('payments.record', 'write'))).toBe(false);
  });

  it('a custom role cannot widen a built-in role of the same name', () => {
    expect(roleReaches(principal({ role: 'viewer' }), write, { viewer: ['%'] })).toBe(false);
  });

  it('an unknown role reaches nothing', () => {
    expect(roleReaches(principal({ role: 'superuser' }), read)).toBe(false);
  });

  it('a role named like an Object.prototype member reaches nothing and does not throw', () => {
    for (const role of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(() => roleReaches(principal({ role }), read), role).not.toThrow();
      expect(roleReaches(principal({ role }), read), role).toBe(false);
    }
  });
});

describe('keyPatternsReach', () => {
  it('a key with no patterns (null or empty) is not narrowed', () => {
    expect(keyPatternsReach(principal({ patterns: null }), t('invoices.void', 'destructive'))).toBe(true);
    expect(keyPatternsReach(principal({ patterns: [] }), t('invoices.void', 'destructive'))).toBe(true);
  });

  it('a key with patterns reaches only what one of them selects', () => {
    const p = principal({ patterns: ['invoices.%:read', 'parties.create'] });
    expect(keyPatternsReach(p, t('invoices.list', 'read'))).toBe(true);
    expect(keyPatternsReach(p, t('invoices.create', 'write'))).toBe(false);
    expect(keyPatternsReach(p, t('parties.create', 'write'))).toBe(true);
    expect(keyPatternsReach(p, t('parties.list', 'read'))).toBe(false);
  });
});

describe('scopesReach', () => {
  it('an API key (scopes null) is not limited by scopes', () => {
    expect(scopesReach(principal({ scopes: null }), 'tools')).toBe(true);
    expect(scopesReach(principal({ scopes: null }), 'sites.edit')).toBe(true);
  });

  it('tools includes tools:read', () => {
    const p = principal({ scopes: ['tools'] });
    expect(scopesReach(p, 'tools')).toBe(true);
    expect(scopesReach(p, 'tools:read')).toBe(true);
  });

  it('tools:read does not reach tools', () => {
    const p = principal({ scopes: ['tools:read'] });
    expect(scopesReach(p, 'tools:read')).toBe(true);
    expect(scopesReach(p, 'tools')).toBe(false);
  });

  it('sites.* tools need sites.edit; tools does not reach them', () => {
    expect(scopesReach(principal({ scopes: ['sites.edit'] }), 'sites.edit')).toBe(true);
    expect(scopesReach(principal({ scopes: ['tools'] }), 'sites.edit')).toBe(false);
    expect(scopesReach(principal({ scopes: ['sites.edit'] }), 'tools')).toBe(false);
    expect(scopesReach(principal({ scopes: ['sites.edit'] }), 'tools:read')).toBe(false);
  });

  it('sites.login and an empty scope list reach no tool', () => {
    for (const scopes of [['sites.login'], []]) {
      for (const scope of ['tools', 'tools:read', 'sites.edit']) expect(scopesReach(principal({ scopes }), scope)).toBe(false);
    }
  });
});
