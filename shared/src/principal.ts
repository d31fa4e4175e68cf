import type { Risk } from './tool.ts';

/** Who is calling, as the gateway established it (CONTRACT.md §4, §6 `actor`). */
export interface Principal {
  workspace: string;
  role: string;
  /**
   * Who acts. `visitor`: someone without an account using a public page of the workspace (the
   * booking page), through a principal the gateway makes for that page alone (role `visitor`).
   */
  actor: { type: 'api_key' | 'member' | 'agent' | 'oauth_app' | 'service' | 'visitor'; id: string };
  credential_id: string;
  /** OAuth scopes; `null` for API keys (a key is limited by its role and patterns instead). */
  scopes: string[] | null;
  /** API key patterns (`invoices.%`, `%:read`); `null` when the key is not narrowed. */
  patterns: string[] | null;
  /**
   * The tool patterns of a custom role (`roles.*`), resolved by the gateway when it authenticated
   * the credential and carried in the assertion, so subgraphs check custom roles too. `null` or
   * absent for built-in roles (their patterns are `BUILT_IN_ROLES`, never redefined).
   */
  role_patterns?: string[] | null;
  /**
   * The person (user id, `usr_…`) behind the credential, whatever app, key or session carries it:
   * an OAuth token's or browser session's user, or the member who created an API key. `null` or
   * absent for operator-made keys and agent keys. "Nobody decides their own request" compares this
   * (CONTRACT.md §9).
   */
  person?: string | null;
  /**
   * The workspace's country (ISO 3166-1 alpha-2), stated by the gateway from the workspace record:
   * it decides the tax regime and the calendar of the workspace's documents (shared/src/locale.ts).
   * Absent: read as Colombia.
   */
  country?: string;
  /**
   * The agent run this call is made for (`run_…`), when the caller is an agent of the workspace
   * running a task (issue 37): carried to the owner in the assertion and written on the call's
   * ledger entry (`run_id`). Only the agents service's run assertion sets it (peers.ts).
   */
  run?: string | null;
}

/**
 * The namespace of a caller's `Idempotency-Key`s (CONTRACT.md §9): the person behind an OAuth
 * token or session, else the API key itself. Another principal using the same string starts its own request.
 */
export function idempotencyScope(principal: Principal): string {
  return principal.scopes !== null && principal.person ? `usr:${principal.person}` : `cred:${principal.credential_id}`;
}

/**
 * Built-in roles as sets of tool patterns (CONTRACT.md §4). `%` matches any run of
 * characters; a `:<risk>` suffix narrows to a risk class.
 */
export const BUILT_IN_ROLES: Record<string, readonly string[]> = {
  owner: ['%'],
  admin: ['%'],
  accountant: [
    '%:read', 'invoices.%', 'bills.%', 'quotes.%', 'sales_orders.%', 'purchase_orders.%', 'items.%', 'payments.%',
    'payment_runs.%', 'bank.%', 'accounts.%', 'journal.%', 'periods.%', 'assets.%', 'warehouses.%', 'stock.%', 'inventory_counts.%', 'documents.%', 'einvoicing.%',
    'tax.%', 'parties.%', 'payroll.%', 'employees.%', 'dashboards.%', 'dimensions.%', 'metrics.%',
  ],
  member: [
    '%:read', 'parties.%:write', 'deals.%:write', 'projects.%:write', 'tasks.%:write', 'calendar.%:write',
    'dashboards.%:write', 'quotes.%:write', 'items.%:write', 'invoices.%:write', 'metrics.%:write',
  ],
  viewer: ['%:read'],
  agent: [
    '%:read', 'invoices.%', 'quotes.%', 'sales_orders.%', 'items.%', 'payments.%', 'bills.%', 'parties.%', 'deals.%',
    'projects.%', 'tasks.%', 'calendar.%', 'employees.%', 'payroll.%', 'dashboards.%', 'metrics.%',
    // An outside MCP server's tool (issue 37): a workspace's own agent also needs mcp.<key>.<tool> in its patterns.
    'mcp_servers.call',
  ],
};

const patternCache = new Map<string, { name: RegExp; risk: string | null }>();

function compilePattern(pattern: string): { name: RegExp; risk: string | null } {
  let compiled = patternCache.get(pattern);
  if (!compiled) {
    const colon = pattern.lastIndexOf(':');
    const namePart = colon >= 0 ? pattern.slice(0, colon) : pattern;
    const risk = colon >= 0 ? pattern.slice(colon + 1) : null;
    const source = namePart.split('%').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
    compiled = { name: new RegExp(`^${source}$`), risk };
    patternCache.set(pattern, compiled);
  }
  return compiled;
}

/** True when `pattern` (`invoices.%`, `%:read`, `invoices.%:read`) selects the tool. */
export function patternMatches(pattern: string, tool: { name: string; risk: Risk }): boolean {
  const { name, risk } = compilePattern(pattern);
  return name.test(tool.name) && (risk === null || risk === tool.risk);
}

/** True when any of the patterns selects the tool. */
export function anyPatternMatches(patterns: readonly string[], tool: { name: string; risk: Risk }): boolean {
  return patterns.some((p) => patternMatches(p, tool));
}

/** Valid shape of a pattern: name characters and `%`, optionally `:<risk>`. */
export const TOOL_PATTERN = /^[a-z0-9_.%]+(:(read|write|external|destructive))?$/;

/** True when `role` is one of the built-in roles (own properties only). */
export function isBuiltInRole(role: string): boolean {
  return Object.hasOwn(BUILT_IN_ROLES, role);
}

/**
 * The tool patterns of the principal's role: a built-in role's own (a principal can never
 * redefine `owner`), else the custom role's `role_patterns` from the gateway, else `customRoles`.
 * `undefined` when the role is unknown: it reaches nothing.
 */
export function rolePatternsOf(principal: Principal, customRoles: Record<string, readonly string[]> = {}): readonly string[] | undefined {
  // Own properties only: a role named `constructor` or `__proto__` must reach nothing.
  if (isBuiltInRole(principal.role)) return BUILT_IN_ROLES[principal.role];
  if (Array.isArray(principal.role_patterns)) return principal.role_patterns;
  return Object.hasOwn(customRoles, principal.role) ? customRoles[principal.role] : undefined;
}

/** Does the principal's role (built-in or custom) reach the tool? */
export function roleReaches(principal: Principal, tool: { name: string; risk: Risk }, customRoles: Record<string, readonly string[]> = {}): boolean {
  const patterns = rolePatternsOf(principal, customRoles);
  return patterns !== undefined && anyPatternMatches(patterns, tool);
}

/**
 * Does `outer` select every tool `inner` selects? Sound (never says yes wrongly): `outer`'s name
 * part, as a glob, must match `inner`'s name part read literally (so an `inner` `%` can only be
 * matched by an `outer` `%`), and `outer` has no risk suffix or the same one.
 */
export function patternCovers(outer: string, inner: string): boolean {
  const o = compilePattern(outer);
  const colon = inner.lastIndexOf(':');
  const innerName = colon >= 0 ? inner.slice(0, colon) : inner;
  const innerRisk = colon >= 0 ? inner.slice(colon + 1) : null;
  return o.name.test(innerName) && (o.risk === null || o.risk === innerRisk);
}

/** Is every pattern of `inner` covered by one of `outer`? (`[]` is covered by anything.) */
export function patternsCover(outer: readonly string[], inner: readonly string[]): boolean {
  return inner.every((i) => outer.some((o) => patternCovers(o, i)));
}

/** Does the key's own narrowing (its patterns, if any) reach the tool? */
export function keyPatternsReach(principal: Principal, tool: { name: string; risk: Risk }): boolean {
  return principal.patterns === null || principal.patterns.length === 0 || anyPatternMatches(principal.patterns, tool);
}

/** The OAuth scopes that reach some tool (CONTRACT.md §1); `sites.login` is identity only and reaches none. */
export const TOOL_SCOPES: readonly string[] = ['tools:read', 'tools', 'sites.edit'];

/**
 * Does the credential reach any tool at all? Every surface (REST, MCP, GraphQL) asks this before
 * anything else and answers `insufficient_scope` when not, so a token of `sites.login` alone is
 * refused the same way everywhere.
 */
export function scopesReachAnyTool(principal: Principal): boolean {
  return principal.scopes === null || principal.scopes.some((s) => TOOL_SCOPES.includes(s));
}

/** Do the OAuth scopes reach a tool that needs `scope`? (`tools` includes `tools:read`.) */
export function scopesReach(principal: Principal, scope: string): boolean {
  if (principal.scopes === null) return true;
  if (principal.scopes.includes(scope)) return true;
  return scope === 'tools:read' && principal.scopes.includes('tools');
}
