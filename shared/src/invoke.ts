import { CuadraError, toCuadraError } from './errors.ts';
import { keyPatternsReach, roleReaches, scopesReach, scopesReachAnyTool, type Principal } from './principal.ts';
import { scopeFor, type Risk } from './tool.ts';

/**
 * Refuses a credential whose scopes reach no tool at all (a `sites.login` token: identity only), the
 * same way on every surface — REST, MCP and GraphQL ask it first.
 */
export function assertReachesSomeTool(principal: Principal): void {
  if (!scopesReachAnyTool(principal)) {
    throw new CuadraError('insufficient_scope', 'This access token\'s scopes reach no tool (sites.login is identity only); tools need the "tools:read", "tools" or "sites.edit" scope.', { extra: { scope: 'tools:read' } });
  }
}

/**
 * Step 4 of the pipeline (CONTRACT.md §3): scope → `insufficient_scope`; role or key
 * pattern → `policy_denied`. Run in the gateway and again in the owning subgraph.
 */
export function assertReach(principal: Principal, tool: { name: string; risk: Risk; module: string }): void {
  const scope = scopeFor(tool);
  if (!scopesReach(principal, scope)) {
    throw new CuadraError('insufficient_scope', `This credential's scopes do not reach ${tool.name}; it needs the "${scope}" scope.`, { extra: { scope } });
  }
  if (!roleReaches(principal, tool)) {
    throw new CuadraError('policy_denied', `The role "${principal.role}" does not allow ${tool.name}.`);
  }
  if (!keyPatternsReach(principal, tool)) {
    throw new CuadraError('policy_denied', `This API key is narrowed to tool patterns that do not include ${tool.name}.`);
  }
}

/** True when the principal may see the tool in a listing (same rules as calling it). */
export function reaches(principal: Principal, tool: { name: string; risk: Risk; module: string }): boolean {
  try {
    assertReach(principal, tool);
    return true;
  } catch {
    return false;
  }
}

/** The answer of a tool that ran: `{tool, output}` (specification §2.1). */
export interface ToolAnswer {
  tool: string;
  output: Record<string, unknown>;
}

/** Maps driver failures to contract codes; passes contract errors through. */
export function classifyFailure(err: unknown): CuadraError {
  const e = err as { code?: unknown; name?: unknown };
  if (e && e.code === 11000) return new CuadraError('conflict', 'A record with the same unique value already exists.', { cause: err });
  // A database or Redis that cannot be reached is `unavailable` (recognised in one place: toCuadraError).
  return toCuadraError(err);
}
