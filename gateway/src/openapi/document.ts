import { ERROR_STATUS, type ErrorCode } from '@cuadra/shared';
import type { PublicTool } from '../catalog.ts';
import { API_VERSIONS } from '../versions/dates.ts';

type Json = Record<string, unknown>;

const SCOPES = {
  'tools:read': 'Read tools only. Changes nothing in the workspace.',
  tools: 'Every tool the granting member\'s role reaches, reads and writes. Calls the workspace holds for approval still wait for a person.',
  'sites.login': 'Signing a visitor in to a site hosted by the service. Identity only, no tools.',
  'sites.edit': 'Editing the workspace\'s sites through the sites.* tools.',
};

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** One reusable response per refusal code, named after it. */
const REFUSAL_WHEN: Record<ErrorCode, string> = {
  unauthenticated: 'Credential missing, expired or revoked.',
  insufficient_scope: 'The credential\'s scopes do not reach this endpoint.',
  approval_required: 'The call waits for a person\'s approval; repeat it with X-Approval-Id once approved.',
  policy_denied: 'The credential\'s role, key patterns or the workspace\'s policies do not allow the tool, or X-Tenant-Id names another workspace.',
  unknown_tool: 'No tool has that name.',
  not_found: 'A record the input names does not exist.',
  method_not_allowed: 'The path does not serve this method; `Allow` lists those it does.',
  idempotency_conflict: 'The Idempotency-Key was already used with a different input.',
  conflict: 'The record\'s state forbids the action.',
  body_too_large: 'The input exceeds the tool\'s limit.',
  uri_too_long: 'The request line (the path, with a tool\'s name) is longer than the server reads (16 KiB with the headers).',
  headers_too_large: 'The request\'s headers are larger than the server reads (16 KiB with the request line).',
  invalid_input: 'An argument does not fit the schema; `field` is its JSON Pointer.',
  dry_run_unsupported: 'X-Dry-Run: true on a write tool that cannot say beforehand what it would do; nothing was done.',
  rate_limited: 'Too many requests; wait Retry-After seconds and retry.',
  internal: 'Something failed on the service\'s side.',
  outcome_unknown: 'The call reached its owning service and no outcome came back; retry with the same Idempotency-Key to learn the real outcome.',
  unavailable: 'The call never reached its owning service (or the store is unreachable); nothing was done.',
};

/** Responses by status for the refusals a tool invoke can answer (codes sharing a status share one response). */
function refusalResponses(codes: readonly ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const out: Json = {};
  for (const status of byStatus.keys()) out[String(status)] = ref('responses', `Refusal${status}`);
  return out;
}

function refusalComponents(): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERROR_STATUS) as ErrorCode[]) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const out: Json = {};
  for (const [status, codes] of byStatus) {
    const headers: Json = { RateLimit: ref('headers', 'RateLimit'), 'RateLimit-Policy': ref('headers', 'RateLimitPolicy') };
    if (status === 401 || codes.includes('insufficient_scope')) headers['WWW-Authenticate'] = ref('headers', 'WWWAuthenticate');
    if (status === 429) headers['Retry-After'] = ref('headers', 'RetryAfter');
    // An invalid_input always names its field (a JSON Pointer; "" for the body itself), an approval_required its approval.
    const required = [...(codes.includes('invalid_input') && codes.length === 1 ? ['field'] : []), ...(codes.includes('approval_required') && codes.length === 1 ? ['approval_id'] : [])];
    out[`Refusal${status}`] = {
      description: codes.map((c) => `\`${c}\`: ${REFUSAL_WHEN[c]}`).join(' '),
      headers,
      content: { 'application/json': { schema: { allOf: [ref('schemas', 'Refusal'), { properties: { code: { enum: codes } }, ...(required.length ? { required } : {}) }] } } },
    };
  }
  return out;
}

/** What an invoke's body may be (CONTRACT.md §10), said on every invoke operation. */
const ABSENT_BODY = 'The tool\'s input, a JSON object. A request with no body (no bytes) is taken as the empty object `{}` (a tool with required arguments then refuses at the first of them); a body that is present and not a JSON object is refused 422 `invalid_input` with `field: ""`.';

/**
 * Links from a tool that makes or changes a record to the tools of the same module that act on
 * that record by its id (`invoices.create` → `invoices.get`, `invoices.update`, `invoices.post`…):
 * a target takes `id` and answers the same record property as the source, whose `output.<record>.id`
 * it is given. OpenAPI link objects, so clients and stateful testers (schemathesis) can chain calls.
 */
function linksOf(tool: PublicTool, tools: readonly PublicTool[]): Json | undefined {
  if (tool.risk === 'read') return undefined;
  const records = recordProperties(tool.output_schema);
  if (records.length === 0) return undefined;
  const links: Json = {};
  for (const target of tools) {
    if (target.name === tool.name || target.module !== tool.module) continue;
    const input = target.input_schema as { required?: unknown; properties?: Record<string, unknown> };
    if (!Array.isArray(input.required) || !input.required.includes('id') || !input.properties?.id) continue;
    const record = records.find((r) => recordProperties(target.output_schema).includes(r));
    if (!record) continue;
    links[target.name] = {
      operationId: target.name,
      requestBody: { id: `{$response.body#/output/${record}/id}` },
      description: `The ${record} this call answered, by its id: ${summaryOf(target.description)}`,
    };
  }
  return Object.keys(links).length ? links : undefined;
}

/** The top-level properties of an output that are records with an `id` (`invoice` of `{invoice: {id, …}}`). */
function recordProperties(schema: unknown): string[] {
  const props = (schema as { properties?: Record<string, { properties?: Record<string, unknown> }> } | undefined)?.properties;
  if (!props) return [];
  return Object.entries(props).filter(([, s]) => typeof s === 'object' && s !== null && typeof s.properties?.id === 'object').map(([k]) => k);
}

/** The invoke refusals, in the contract's order of checks (CONTRACT.md §3), plus the owner's. */
const INVOKE_REFUSALS: readonly ErrorCode[] = [
  'unauthenticated', 'rate_limited', 'unknown_tool', 'insufficient_scope', 'policy_denied', 'approval_required', 'body_too_large',
  'invalid_input', 'idempotency_conflict', 'not_found', 'conflict', 'internal', 'outcome_unknown', 'unavailable',
];

/** OpenAPI security requirements that reach a tool of this scope (`tools` includes `tools:read`). */
function securityFor(scope: string): Json[] {
  const oauth = scope === 'tools:read' ? [{ oauth2: ['tools:read'] }, { oauth2: ['tools'] }] : [{ oauth2: [scope] }];
  return [...oauth, { apiKey: [] }];
}

function summaryOf(description: string): string {
  const first = /^.*?[.!?](\s|$)/.exec(description)?.[0]?.trim() ?? description;
  return first.length <= 120 ? first : `${first.slice(0, 117)}…`;
}

/** The operation invoking one tool: its input schema as the body, its output and every refusal as responses, its scope in security. */
function toolOperation(tool: PublicTool): Json {
  const responses: Json = {
    200: {
      description: 'The tool ran.',
      headers: { RateLimit: ref('headers', 'RateLimit'), 'RateLimit-Policy': ref('headers', 'RateLimitPolicy'), 'Idempotent-Replayed': ref('headers', 'IdempotentReplayed') },
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['tool', 'output'],
            properties: { tool: { const: tool.name }, output: tool.output_schema ?? { type: 'object', description: 'The tool\'s result.' } },
          },
        },
      },
    },
  };
  // Any call, reads included, can be held or asked about by a workspace's policy (a pattern such as `%`).
  responses[202] = ref('responses', 'PendingApproval');
  Object.assign(responses, refusalResponses(INVOKE_REFUSALS));
  const parameters = [ref('parameters', 'TenantId'), ref('parameters', 'IdempotencyKey'), ref('parameters', 'CuadraVersion')];
  if (tool.risk !== 'read') parameters.push(ref('parameters', 'ApprovalId'));
  return {
    operationId: tool.name,
    summary: summaryOf(tool.description),
    description: tool.description,
    tags: [tool.module],
    security: securityFor(tool.scope),
    parameters,
    requestBody: { required: false, description: ABSENT_BODY, content: { 'application/json': { schema: tool.input_schema } } },
    responses,
    ...(tool.deprecated ? { deprecated: true, 'x-cuadra-deprecated': tool.deprecated } : {}),
    'x-cuadra-risk': tool.risk,
    'x-cuadra-scope': tool.scope,
    'x-cuadra-annotations': tool.annotations,
  };
}

const oauthError = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' }, error_description: { type: 'string' } } } } },
});
const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const anyJson = (description: string) => ({ description, content: { 'application/json': { schema: { type: 'object' } } } });

/** The contract's endpoints other than the per-tool invokes (CONTRACT.md §2). */
function otherPaths(): Json {
  const toolsSecurity = [{ oauth2: ['tools:read'] }, { oauth2: ['tools'] }, { apiKey: [] }];
  const mcpResponses = {
    200: { description: 'A JSON-RPC response, as JSON or as a server-sent event stream.', content: { 'application/json': { schema: { type: 'object' } }, 'text/event-stream': { schema: { type: 'string' } } } },
    202: { description: 'A notification or response was accepted.' },
    400: { description: 'Not a JSON-RPC message this endpoint takes (a JSON-RPC error object), or a session header missing or wrong.', content: { 'application/json': { schema: { type: 'object' } } } },
    401: ref('responses', 'Refusal401'),
    403: ref('responses', 'Refusal403'),
    404: { description: 'The Mcp-Session-Id is unknown or belongs to another credential (protocol 2025-11-25).' },
    405: ref('responses', 'Refusal405'),
    413: ref('responses', 'Refusal413'),
    429: ref('responses', 'Refusal429'),
    503: ref('responses', 'Refusal503'),
  };
  // The MCP headers (Streamable HTTP): the 2025-11-25 session, and the protocol revision in use.
  const mcpParameters = [
    { name: 'Mcp-Session-Id', in: 'header', required: false, schema: { type: 'string', pattern: '^[\\x21-\\x7e]+$' }, description: 'The session `initialize` answered (protocol 2025-11-25); absent for 2026-07-28, which has no sessions.' },
    { name: 'MCP-Protocol-Version', in: 'header', required: false, schema: { enum: ['2025-11-25', '2026-07-28'] }, description: 'The protocol revision the client speaks.' },
    ref('parameters', 'TenantId'), ref('parameters', 'IdempotencyKey'), ref('parameters', 'ApprovalId'),
  ];
  const mcpAnswer = { ...mcpResponses, 200: { ...mcpResponses[200], headers: { 'Mcp-Session-Id': { schema: { type: 'string' }, description: 'The new session (the answer to a 2025-11-25 `initialize`).' } } } };
  // The authorization request's parameters (RFC 6749 §4.1.1, RFC 7636 PKCE, RFC 8707 resource).
  const authorizeParameters = {
    response_type: { schema: { const: 'code' }, required: true, description: 'Only the authorization code flow.' },
    client_id: { schema: { type: 'string', minLength: 1 }, required: true, description: 'A registered client\'s id (`cli_…`) or a Client ID Metadata Document URL (https).' },
    redirect_uri: { schema: { type: 'string', format: 'uri' }, required: true, description: 'One of the client\'s redirect URIs, exactly (any port on loopback).' },
    code_challenge: { schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' }, required: true, description: 'PKCE: base64url SHA-256 of the code verifier.' },
    code_challenge_method: { schema: { const: 'S256' }, required: true, description: 'PKCE method; only S256.' },
    scope: { schema: { type: 'string', pattern: '^[a-z:.]+( [a-z:.]+)*$' }, required: false, description: 'Space-separated scopes (tools:read, tools, sites.login, sites.edit); default tools:read.' },
    state: { schema: { type: 'string' }, required: false, description: 'Returned unchanged with the code.' },
    resource: { schema: { type: 'string', format: 'uri' }, required: false, description: 'The resource the token is for (RFC 8707): binds its audience.' },
  } as const;
  const authorizeForm = {
    type: 'object',
    properties: {
      ...Object.fromEntries(Object.entries(authorizeParameters).map(([k, v]) => [k, { ...v.schema, description: v.description }])),
      csrf: { type: 'string', description: 'The form\'s anti-forgery token.' },
      email: { type: 'string', format: 'email' },
      password: { type: 'string', writeOnly: true },
      decision: { enum: ['approve', 'deny'] },
      workspace: { type: 'string', description: 'The workspace the token is for, when the person belongs to several.' },
    },
  };
  return {
    '/v1/tools': {
      get: {
        operationId: 'tools.list',
        summary: 'Lists the tools the credential reaches, with risk class, scope, input schema and MCP annotations.',
        tags: ['catalog'],
        security: toolsSecurity,
        parameters: [
          ref('parameters', 'TenantId'),
          { name: 'module', in: 'query', required: false, schema: { type: 'string' }, description: 'Only tools of this module.' },
          { name: 'search', in: 'query', required: false, schema: { type: 'string' }, description: 'Case-insensitive substring of the name or description.' },
        ],
        responses: {
          200: { description: 'The tools.', content: { 'application/json': { schema: { type: 'object', required: ['tools'], properties: { tools: { type: 'array', items: ref('schemas', 'Tool') } } } } } },
          ...refusalResponses(['unauthenticated', 'insufficient_scope', 'policy_denied']),
        },
      },
    },
    '/v1/auth/agent-signup': {
      post: {
        operationId: 'auth.agentSignup',
        summary: 'An AI agent opens an account and workspace for the person it works for.',
        tags: ['auth'],
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                required: ['email', 'workspace_name', 'agent_name'],
                properties: {
                  email: { type: 'string', format: 'email' },
                  workspace_name: { type: 'string', minLength: 1 },
                  agent_name: { type: 'string', minLength: 1 },
                  name: { type: 'string' },
                  country: { type: 'string', pattern: '^[A-Z]{2}$', default: 'CO' },
                  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
                },
              },
            },
          },
        },
        responses: {
          201: {
            description: 'The workspace, its agent key and the URL the person claims it at.',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['workspace_id', 'api_key', 'role', 'claim_url'],
                  properties: { workspace_id: { type: 'string' }, api_key: { type: 'string', pattern: '^nk_' }, role: { const: 'agent' }, claim_url: { type: 'string', format: 'uri' } },
                },
              },
            },
          },
          ...refusalResponses(['invalid_input', 'rate_limited']),
        },
      },
    },
    '/mcp': {
      post: { operationId: 'mcp.post', summary: 'MCP Streamable HTTP: one JSON-RPC message (protocol 2025-11-25 or 2026-07-28).', tags: ['mcp'], security: toolsSecurity, parameters: mcpParameters, requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'JsonRpcMessage') } } }, responses: mcpAnswer },
      get: { operationId: 'mcp.get', summary: 'MCP server-sent event stream of a 2025-11-25 session.', tags: ['mcp'], security: toolsSecurity, parameters: mcpParameters, responses: mcpResponses },
      delete: { operationId: 'mcp.delete', summary: 'Ends a 2025-11-25 MCP session.', tags: ['mcp'], security: toolsSecurity, parameters: mcpParameters, responses: mcpResponses },
    },
    '/healthz': {
      get: {
        operationId: 'health',
        summary: 'Reports whether the API is serving.',
        tags: ['service'],
        security: [],
        responses: { 200: ref('responses', 'Health'), 503: ref('responses', 'Health') },
      },
    },
    '/v1/events': {
      get: {
        operationId: 'events.stream',
        summary: 'Server-sent events of the caller\'s workspace ledger: {module, tool, outcome, at} per entry.',
        tags: ['events'],
        security: toolsSecurity,
        responses: { 200: { description: 'The event stream.', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...refusalResponses(['unauthenticated', 'insufficient_scope', 'policy_denied']) },
      },
    },
    '/openapi.json': {
      get: { operationId: 'openapi', summary: 'This document.', tags: ['service'], security: [], responses: { 200: anyJson('OpenAPI 3.1.') } },
    },
    '/oauth/authorize': {
      get: {
        operationId: 'oauth.authorize', summary: 'Login and consent page (authorization code + PKCE S256).', tags: ['oauth'], security: [],
        parameters: Object.entries(authorizeParameters).map(([name, p]) => ({ name, in: 'query', ...p })),
        responses: { 200: html('The page.'), 303: { description: 'Back to redirect_uri with code, state and iss.' }, 400: html('A bad request the page explains.') },
      },
      post: { operationId: 'oauth.authorizeSubmit', summary: 'Submits the login or consent form: the authorization request\'s parameters again, with the person\'s e-mail and password, then their decision.', tags: ['oauth'], security: [], requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: authorizeForm } } }, responses: { 200: html('The next page.'), 303: { description: 'Back to redirect_uri with code (or error), state and iss.' }, 400: html('A bad request the page explains.') } },
    },
    '/oauth/token': {
      post: {
        operationId: 'oauth.token',
        summary: 'Token endpoint: authorization_code (with code_verifier) and refresh_token grants.',
        tags: ['oauth'],
        security: [],
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['grant_type'], properties: { grant_type: { enum: ['authorization_code', 'refresh_token'] } } } } } },
        responses: { 200: anyJson('Access token (1 h) and refresh token (30 days).'), 400: oauthError('An OAuth error.'), 401: oauthError('Client authentication failed.') },
      },
    },
    '/oauth/revoke': {
      post: { operationId: 'oauth.revoke', summary: 'Revokes a token (RFC 7009).', tags: ['oauth'], security: [], requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['token'], properties: { token: { type: 'string' } } } } } }, responses: { 200: { description: 'Revoked (or unknown).' }, 400: oauthError('An OAuth error.'), 401: oauthError('Client authentication failed (invalid_client).') } },
    },
    '/oauth/register': {
      post: { operationId: 'oauth.register', summary: 'Dynamic client registration (RFC 7591).', tags: ['oauth'], security: [], requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', 'ClientMetadata') } } }, responses: { 201: { description: 'The registered client (RFC 7591 §3.2.1); `client_secret` only for a confidential client, shown once.', content: { 'application/json': { schema: ref('schemas', 'RegisteredClient') } } }, 400: oauthError('Invalid client metadata.'), 413: oauthError('Client metadata over 16 KB.'), 429: oauthError('Too many registrations from this address.') } },
    },
    '/.well-known/oauth-authorization-server': {
      get: { operationId: 'oauth.metadata', summary: 'Authorization server metadata (RFC 8414).', tags: ['oauth'], security: [], responses: { 200: anyJson('The metadata.') } },
    },
    '/.well-known/oauth-protected-resource': {
      get: { operationId: 'oauth.protectedResource', summary: 'Protected resource metadata (RFC 9728), with scopes_supported.', tags: ['oauth'], security: [], responses: { 200: anyJson('The metadata.') } },
    },
    '/.well-known/oauth-protected-resource/mcp': {
      get: { operationId: 'oauth.protectedResourceMcp', summary: 'Protected resource metadata of the MCP endpoint (RFC 9728, path-aware).', tags: ['oauth'], security: [], responses: { 200: anyJson('The metadata.') } },
    },
    '/claim': {
      get: { operationId: 'claim.page', summary: 'The person claims a workspace an agent opened.', tags: ['auth'], security: [], parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }], responses: { 200: html('The claim form.'), 400: html('An invalid or used token.'), 429: html('Too many attempts.') } },
      post: { operationId: 'claim.submit', summary: 'Claims the workspace: the person becomes its owner.', tags: ['auth'], security: [], requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['token', 'password', 'name'], properties: { token: { type: 'string' }, code: { type: 'string', pattern: '^[0-9]{8}$', description: 'The one-time code e-mailed to the person (claims of agent-opened workspaces).' }, password: { type: 'string', minLength: 12 }, name: { type: 'string' } } } } } }, responses: { 200: html('Done.'), 303: { description: 'On to sign-in.' }, 400: html('An invalid or used token, a wrong code, or a short password.'), 401: html('Not the password of the existing account.'), 403: html('The form expired, or the claim is locked after 5 wrong codes.'), 429: html('Too many attempts.') } },
    },
  };
}

/**
 * The OpenAPI 3.1 description of the service (CONTRACT.md §2): one operation per tool at
 * `/v1/tools/{tool name}:invoke`, its input schema as the request body, its output, the held
 * answer and every refusal as responses, the scope that reaches it in `security`; and the
 * contract's other endpoints. Built from the same catalog as every other surface.
 */
/**
 * A tool's input schema made self-contained for the OpenAPI document: its `$defs` move to
 * `components/schemas` (shared by name when tools share them, as the dashboards tools do), every
 * `#/$defs/…` reference points there, and the embedded `$id` goes — common OpenAPI tools do not
 * resolve references under an embedded `$id` (issue 13).
 */
export function bundleSchema(schema: Json, tool: string, shared: Json): Json {
  const defs = (schema.$defs ?? {}) as Record<string, Json>;
  const names = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) {
    const taken = shared[name];
    const free = taken === undefined || JSON.stringify(taken) === JSON.stringify(rewriteRefs(def, names));
    names.set(name, free ? name : `${tool.replace(/\./g, '_')}_${name}`);
  }
  for (const [name, def] of Object.entries(defs)) shared[names.get(name)!] ??= rewriteRefs(def, names);
  const { $defs: _defs, $id: _id, ...rest } = schema;
  return rewriteRefs(rest, names) as Json;
}

function rewriteRefs(node: unknown, names: Map<string, string>): any {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, names));
  if (typeof node !== 'object' || node === null) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
      const name = v.slice('#/$defs/'.length);
      out.$ref = `#/components/schemas/${names.get(name) ?? name}`;
    } else out[k] = rewriteRefs(v, names);
  }
  return out;
}

export function openApiDocument(tools: readonly PublicTool[], publicUrl: string): Json {
  const paths: Json = {};
  const bundled: Json = {};
  for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    const op = toolOperation(tool);
    (op.requestBody as { content: Record<string, { schema: unknown }> }).content['application/json'].schema = bundleSchema(tool.input_schema as Json, tool.name, bundled);
    if (tool.output_schema) {
      const ok = (op.responses as Json)[200] as { content: Record<string, { schema: { properties: Json } }> };
      ok.content['application/json'].schema.properties.output = bundleSchema(tool.output_schema as Json, `${tool.name}.output`, bundled);
    }
    const links = linksOf(tool, tools);
    if (links) ((op.responses as Json)[200] as Json).links = links;
    paths[`/v1/tools/${tool.name}:invoke`] = { post: op };
  }
  Object.assign(paths, otherPaths());
  const modules = [...new Set(tools.map((t) => t.module))].sort();
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Cuadra',
      version: '1',
      summary: 'A business workspace where every capability is a named tool.',
      description:
        'Every capability is a tool, invoked with POST /v1/tools/{name}:invoke through one pipeline: role permissions, '
        + 'autonomy policies, approvals, an action ledger, idempotency and rate limits. Money is integer minor units with an ISO 4217 currency; '
        + 'dates are YYYY-MM-DD. The same tools are served to AI assistants over MCP at /mcp.',
    },
    servers: [{ url: publicUrl }],
    tags: [
      ...modules.map((m) => ({ name: m, description: `Tools of the ${m} module.` })),
      { name: 'catalog' }, { name: 'mcp' }, { name: 'auth' }, { name: 'oauth' }, { name: 'events' }, { name: 'service' },
    ],
    paths,
    components: {
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.1 for applications acting for a person: authorization code with PKCE (S256). Access tokens last 1 hour, refresh tokens 30 days.',
          flows: { authorizationCode: { authorizationUrl: `${publicUrl}/oauth/authorize`, tokenUrl: `${publicUrl}/oauth/token`, refreshUrl: `${publicUrl}/oauth/token`, scopes: SCOPES } },
        },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'nk_…',
          description: 'An API key (`nk_…`) for programs: it carries the role given at creation and, optionally, tool-name patterns.',
        },
      },
      parameters: {
        TenantId: { name: 'X-Tenant-Id', in: 'header', required: false, schema: { type: 'string' }, description: 'Names the workspace; must be the credential\'s own.' },
        IdempotencyKey: { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' }, description: 'A repeated call with the same key and input replays the first answer.' },
        CuadraVersion: { name: 'Cuadra-Version', in: 'header', required: false, schema: { enum: [...API_VERSIONS] }, description: 'The dated API version to be answered as; absent: the version the workspace is pinned to (the one it started on). Every answer states the version in the same header.' },
        ApprovalId: { name: 'X-Approval-Id', in: 'header', required: false, schema: { type: 'string' }, description: 'Runs a call an `approval_required` refusal asked a person to approve, once approved.' },
      },
      headers: {
        RateLimit: { schema: { type: 'string' }, description: 'IETF draft-11 RateLimit field: the policy closest to being spent.' },
        RateLimitPolicy: { schema: { type: 'string' }, description: 'IETF draft-11 RateLimit-Policy field.' },
        RetryAfter: { schema: { type: 'integer' }, description: 'Seconds to wait.' },
        IdempotentReplayed: { schema: { const: 'true' }, description: 'This answer replays the first call with the same Idempotency-Key.' },
        WWWAuthenticate: { schema: { type: 'string' }, description: 'Bearer challenge with resource_metadata (and, for insufficient_scope, the scope needed).' },
      },
      schemas: {
        ...bundled,
        Refusal: {
          type: 'object',
          required: ['error', 'code'],
          properties: {
            error: { type: 'string', description: 'A sentence for a person.' },
            code: { enum: Object.keys(ERROR_STATUS), description: 'Stable machine code.' },
            field: { type: 'string', description: 'JSON Pointer of the offending argument (invalid_input only; "" for the body itself).' },
            approval_id: { type: 'string', description: 'The approval to wait for (approval_required only).' },
          },
          allOf: [
            { if: { required: ['code'], properties: { code: { const: 'invalid_input' } } }, then: { required: ['field'] } },
            { if: { required: ['code'], properties: { code: { const: 'approval_required' } } }, then: { required: ['approval_id'] } },
          ],
        },
        JsonRpcMessage: {
          description: 'One JSON-RPC 2.0 message (MCP): a request, a notification or a response.',
          type: 'object',
          required: ['jsonrpc'],
          properties: {
            jsonrpc: { const: '2.0' },
            id: { type: ['string', 'integer'], description: 'Present in requests and responses; absent in notifications.' },
            method: { type: 'string', description: 'e.g. initialize, tools/list, tools/call.' },
            params: { type: 'object' },
            result: { type: 'object' },
            error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } },
          },
          oneOf: [
            { required: ['method'], not: { anyOf: [{ required: ['result'] }, { required: ['error'] }] } },
            { required: ['id', 'result'], not: { anyOf: [{ required: ['method'] }, { required: ['error'] }] } },
            { required: ['id', 'error'], not: { anyOf: [{ required: ['method'] }, { required: ['result'] }] } },
          ],
        },
        ClientMetadata: {
          description: 'Client metadata (RFC 7591 §2). Other RFC 7591 fields are accepted and ignored.',
          type: 'object',
          required: ['redirect_uris'],
          properties: {
            redirect_uris: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', format: 'uri' } },
            client_name: { type: 'string', minLength: 1, maxLength: 120 },
            client_uri: { type: 'string', format: 'uri', pattern: '^https?://' },
            token_endpoint_auth_method: { enum: ['none', 'client_secret_basic', 'client_secret_post'], default: 'client_secret_basic' },
            grant_types: { type: 'array', items: { enum: ['authorization_code', 'refresh_token'] }, contains: { const: 'authorization_code' }, default: ['authorization_code', 'refresh_token'] },
            response_types: { type: 'array', items: { const: 'code' } },
          },
        },
        RegisteredClient: {
          type: 'object',
          required: ['client_id', 'client_id_issued_at', 'client_name', 'redirect_uris', 'token_endpoint_auth_method', 'grant_types', 'response_types'],
          properties: {
            client_id: { type: 'string', pattern: '^cli_' },
            client_secret: { type: 'string', 'x-secret': true, description: 'Shown once; only its hash is kept.' },
            client_secret_expires_at: { const: 0 },
            client_id_issued_at: { type: 'integer' },
            client_name: { type: 'string' },
            client_uri: { type: 'string' },
            redirect_uris: { type: 'array', items: { type: 'string' } },
            token_endpoint_auth_method: { enum: ['none', 'client_secret_basic', 'client_secret_post'] },
            grant_types: { type: 'array', items: { type: 'string' } },
            response_types: { type: 'array', items: { const: 'code' } },
          },
        },
        Tool: {
          type: 'object',
          required: ['name', 'description', 'module', 'risk', 'scope', 'input_schema', 'annotations'],
          properties: {
            name: { type: 'string', pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)+$' },
            description: { type: 'string' },
            module: { type: 'string' },
            risk: { enum: ['read', 'write', 'external', 'destructive'] },
            scope: { type: 'string' },
            input_schema: { type: 'object' },
            annotations: {
              type: 'object',
              properties: { readOnlyHint: { type: 'boolean' }, destructiveHint: { type: 'boolean' }, idempotentHint: { type: 'boolean' }, openWorldHint: { type: 'boolean' } },
            },
          },
        },
      },
      responses: {
        ...refusalComponents(),
        PendingApproval: {
          description: 'Held for the workspace owner\'s decision (approvals.decide); it runs once, as the caller, when approved.',
          content: {
            'application/json': {
              schema: { type: 'object', required: ['tool', 'status', 'approval_id'], properties: { tool: { type: 'string' }, status: { const: 'pending_approval' }, approval_id: { type: 'string' } } },
            },
          },
        },
        Health: {
          description: 'Health of the API, each subgraph, the database and Redis.',
          content: {
            'application/json': {
              schema: { type: 'object', required: ['status', 'subgraphs'], properties: { status: { type: 'string' }, subgraphs: { type: 'object', additionalProperties: { type: 'string' } } } },
            },
          },
        },
      },
    },
  };
}
