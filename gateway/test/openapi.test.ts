import { validate, compileErrors } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog.ts';
import { openApiDocument } from '../src/openapi/document.ts';
import { mcpTool } from '../src/mcp/server.ts';

// The document built from the real catalog the build wrote; the system test fetches it over HTTP.
const catalog = Catalog.fromBuild();
const tools = catalog.entries;
const doc = openApiDocument(tools, 'https://api.cuadra.example') as any;

describe('openApiDocument', () => {
  it('passes the OpenAPI 3.1 validator', async () => {
    const result = await validate(structuredClone(doc));
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.specification).toBe('OpenAPI');
    expect(doc.openapi).toBe('3.1.0');
  });

  it('bundles every reference under components, so each resolves inside the document', () => {
    const doc = openApiDocument(tools, 'http://127.0.0.1:4000') as any;
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    expect(refs.some((r) => r.startsWith('#/components/schemas/'))).toBe(true);
    for (const ref of new Set(refs)) {
      expect(ref.startsWith('#/')).toBe(true);
      const target = ref.slice(2).split('/').reduce((node: any, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      expect(target, ref).toBeDefined();
    }
    expect(doc.components.schemas.block).toBeDefined();
  });

  it('publishes every tool\'s declared output schema as its 200 answer, and MCP as outputSchema', () => {
    expect(tools.filter((t) => !t.output_schema).map((t) => t.name)).toEqual([]);
    for (const tool of tools) {
      const ok = doc.paths[`/v1/tools/${tool.name}:invoke`].post.responses[200].content['application/json'].schema;
      expect(ok.properties.output, tool.name).toEqual(tool.output_schema);
      const mcp = mcpTool(tool);
      expect(mcp.outputSchema?.type).toBe('object');
      expect((mcp.outputSchema as { anyOf: unknown[] }).anyOf[0]).toEqual(tool.output_schema);
    }
  });

  it('has one invoke operation per tool, with its schema, scope and responses', () => {
    const invokePaths = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/tools/') && p.endsWith(':invoke'));
    expect(invokePaths.sort()).toEqual(tools.map((t) => `/v1/tools/${t.name}:invoke`).sort());
    for (const tool of tools) {
      const op = doc.paths[`/v1/tools/${tool.name}:invoke`].post;
      expect(op.operationId).toBe(tool.name);
      const schema = op.requestBody.content['application/json'].schema;
      // Self-contained: no embedded $id or $defs; a schema without them is published as declared.
      expect(JSON.stringify(schema)).not.toMatch(/"\$id"|"\$defs"|#\/\$defs\//);
      if (!('$defs' in tool.input_schema)) expect(schema).toEqual(tool.input_schema);
      expect(op['x-cuadra-scope']).toBe(tool.scope);
      expect(op.security).toContainEqual({ oauth2: [tool.scope] });
      expect(op.security).toContainEqual({ apiKey: [] });
      expect(Object.keys(op.responses).sort()).toEqual(
        // Any call can be held by a policy (reads too: a pattern such as `%` matches them), so every operation declares 202.
        ['202', '200', '401', '403', '404', '409', '413', '422', '429', '500', '502', '503'].sort(),
      );
    }
    const read = doc.paths['/v1/tools/invoices.list:invoke'].post;
    expect(read.security).toEqual([{ oauth2: ['tools:read'] }, { oauth2: ['tools'] }, { apiKey: [] }]);
    const write = doc.paths['/v1/tools/invoices.create:invoke'].post;
    expect(write.security).toEqual([{ oauth2: ['tools'] }, { apiKey: [] }]);
  });

  it('names every refusal code of the contract with its status', () => {
    const r403 = doc.components.responses.Refusal403.content['application/json'].schema.allOf[1].properties.code.enum;
    expect(r403.sort()).toEqual(['approval_required', 'insufficient_scope', 'policy_denied']);
    expect(doc.components.responses.Refusal422.content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['invalid_input']);
    expect(doc.components.responses.Refusal429.headers['Retry-After']).toBeDefined();
    expect(doc.components.responses.Refusal401.headers['WWW-Authenticate']).toBeDefined();
  });

  it('describes the contract\'s other endpoints and both credential kinds', () => {
    for (const path of ['/v1/tools', '/v1/auth/agent-signup', '/mcp', '/healthz', '/oauth/register', '/oauth/token', '/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/v1/events', '/openapi.json']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/v1/auth/agent-signup'].post.security).toEqual([]);
    expect(Object.keys(doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes)).toEqual(['tools:read', 'tools', 'sites.login', 'sites.edit']);
    expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toBe('https://api.cuadra.example/oauth/token');
  });
});
