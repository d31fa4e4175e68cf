import { compileErrors, validate } from '@readme/openapi-parser';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// GET /openapi.json as a client fetches it: valid OpenAPI 3.1, one operation per tool the gateway serves.

let sys: TestSystem;
let ownerKey: string;

beforeAll(async () => {
  sys = await startTestSystem('openapi');
  ownerKey = (await sys.workspace('OpenAPI SAS')).api_key;
});
afterAll(async () => {
  await sys?.stop();
});

describe('GET /openapi.json', () => {
  it('is served without a credential and passes the OpenAPI 3.1 validator', async () => {
    const r = await sys.fetch('/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const result = await validate(r.body);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(r.body.servers).toEqual([{ url: sys.gatewayUrl }]);
  });

  it('is the same document gzipped for a client that accepts gzip and plain for one that does not (kept gzipped, mem13)', async () => {
    /** The raw answer, as the bytes came (node:http does not inflate). */
    const raw = (headers: Record<string, string>) => new Promise<{ encoding: string | undefined; vary: string | undefined; type: string | undefined; bytes: Buffer }>((resolve, reject) => {
      const req = request(`${sys.gatewayUrl}/openapi.json`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], vary: res.headers.vary, type: res.headers['content-type'], bytes: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
    const plain = await raw({});
    const gzipped = await raw({ 'Accept-Encoding': 'gzip, deflate' });
    expect(plain.encoding).toBeUndefined();
    expect(gzipped.encoding).toBe('gzip');
    for (const r of [plain, gzipped]) {
      expect(r.vary).toMatch(/Accept-Encoding/i);
      expect(r.type).toMatch(/^application\/json/);
    }
    const doc = JSON.parse(plain.bytes.toString('utf8'));
    expect(JSON.parse(gunzipSync(gzipped.bytes).toString('utf8'))).toEqual(doc);
    expect(doc.openapi).toBe('3.1.0');
    // What the gateway keeps and sends: a small part of the document's size.
    expect(gzipped.bytes.length).toBeLessThan(plain.bytes.length / 4);
  });

  it('has an invoke operation for every tool an owner key reaches, with the scope that reaches it', async () => {
    const doc = (await sys.fetch('/openapi.json')).body;
    const listed = (await sys.fetch('/v1/tools', { key: ownerKey })).body.tools as { name: string; scope: string; input_schema: unknown }[];
    expect(listed.length).toBeGreaterThan(10);
    for (const tool of listed) {
      const op = doc.paths[`/v1/tools/${tool.name}:invoke`]?.post;
      expect(op, tool.name).toBeDefined();
      expect(op.security).toContainEqual({ oauth2: [tool.scope] });
      // The document bundles shared definitions under components (no embedded $id); others are as listed.
      const schema = op.requestBody.content['application/json'].schema;
      if (tool.input_schema && typeof tool.input_schema === 'object' && '$defs' in tool.input_schema) expect(JSON.stringify(schema)).not.toContain('$defs');
      else expect(schema).toEqual(tool.input_schema);
    }
    for (const name of ['tools.search', 'tools.describe']) expect(doc.paths[`/v1/tools/${name}:invoke`]).toBeDefined();
  });
});

describe('what the document declares (issue 31, findings 15 and 16)', () => {
  /** An OpenAPI runtime expression embedded as `{$response.body#/…}`, resolved against a response body (RFC 6901, written here). */
  function resolveEmbedded(template: string, body: unknown): unknown {
    const m = /^\{\$response\.body#(\/.*)\}$/.exec(template);
    if (!m) throw new Error(`not a response-body expression: ${template}`);
    return m[1].split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~')).reduce<any>((node, token) => node?.[token], body);
  }

  it('links each record a call makes to the tools that take its id, and a link followed works', async () => {
    const doc = (await sys.fetch('/openapi.json')).body;
    const operations = new Set(Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((op: any) => op.operationId)));
    const links = doc.paths['/v1/tools/parties.create:invoke'].post.responses[200].links;
    expect(Object.keys(links)).toEqual(expect.arrayContaining(['parties.get', 'parties.update']));
    expect(links['parties.get']).toMatchObject({ operationId: 'parties.get', requestBody: { id: '{$response.body#/output/party/id}' } });
    expect(Object.keys(doc.paths['/v1/tools/invoices.create:invoke'].post.responses[200].links)).toEqual(expect.arrayContaining(['invoices.get', 'invoices.update', 'invoices.post']));
    // Every link names an operation of this document.
    for (const path of Object.values(doc.paths) as any[]) {
      for (const op of Object.values(path) as any[]) for (const link of Object.values(op.responses?.[200]?.links ?? {}) as any[]) expect(operations.has(link.operationId), link.operationId).toBe(true);
    }
    // Followed as a client would: the target gets the id the source answered.
    const created = await sys.invoke('parties.create', { name: 'Enlazada SAS', kind: 'customer' }, ownerKey);
    const body = Object.fromEntries(Object.entries(links['parties.get'].requestBody as Record<string, string>).map(([k, v]) => [k, resolveEmbedded(v, created.body)]));
    const got = await sys.invoke(links['parties.get'].operationId, body, ownerKey);
    expect(got.status).toBe(200);
    expect(got.body.output.party).toMatchObject({ id: created.body.output.party.id, name: 'Enlazada SAS' });
  });

  it('declares /oauth/authorize\'s query parameters, the bodies of /oauth/register and /mcp, and Mcp-Session-Id', async () => {
    const doc = (await sys.fetch('/openapi.json')).body;
    const resolve = (node: any) => (node?.$ref ? node.$ref.split('/').slice(1).reduce((n: any, t: string) => n[t], doc) : node);
    const authorize = doc.paths['/oauth/authorize'].get.parameters.map(resolve);
    const byName = Object.fromEntries(authorize.map((p: any) => [p.name, p]));
    for (const name of ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method']) expect(byName[name], name).toMatchObject({ in: 'query', required: true });
    for (const name of ['scope', 'state', 'resource']) expect(byName[name], name).toMatchObject({ in: 'query', required: false });
    expect(byName.code_challenge_method.schema).toEqual({ const: 'S256' });
    const register = resolve(doc.paths['/oauth/register'].post.requestBody.content['application/json'].schema);
    expect(register).toMatchObject({ type: 'object', required: ['redirect_uris'], properties: { redirect_uris: { type: 'array' }, token_endpoint_auth_method: { enum: expect.arrayContaining(['none']) } } });
    const mcp = resolve(doc.paths['/mcp'].post.requestBody.content['application/json'].schema);
    expect(mcp).toMatchObject({ type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' } } });
    for (const method of ['post', 'get', 'delete']) {
      const names = doc.paths['/mcp'][method].parameters.map(resolve).map((p: any) => `${p.in}:${p.name}`);
      expect(names, method).toEqual(expect.arrayContaining(['header:Mcp-Session-Id', 'header:MCP-Protocol-Version']));
    }
    expect(doc.paths['/mcp'].post.responses[200].headers['Mcp-Session-Id']).toBeDefined();
  });

  it('requires `field` in every invalid_input refusal, and a real one has it', async () => {
    const doc = (await sys.fetch('/openapi.json')).body;
    const schema = doc.components.responses.Refusal422.content['application/json'].schema;
    expect(schema.allOf[1].required).toContain('field');
    const refusal = doc.components.schemas.Refusal;
    expect(refusal.allOf).toContainEqual({ if: { required: ['code'], properties: { code: { const: 'invalid_input' } } }, then: { required: ['field'] } });
    const real = await sys.invoke('parties.create', { kind: 'customer' }, ownerKey);
    expect(real.status).toBe(422);
    expect(real.body).toMatchObject({ code: 'invalid_input', field: '/name' });
  });

  it('says an absent body is {} and a present non-object is refused at "", and the service does so', async () => {
    const doc = (await sys.fetch('/openapi.json')).body;
    const body = doc.paths['/v1/tools/parties.create:invoke'].post.requestBody;
    expect(body.required).toBe(false);
    expect(body.description).toMatch(/no body .* `\{\}`/);
    expect(body.description).toMatch(/field: ""/);
    const none = await fetch(`${sys.gatewayUrl}/v1/tools/parties.create:invoke`, { method: 'POST', headers: { authorization: `Bearer ${ownerKey}` } });
    expect(await none.json()).toMatchObject({ code: 'invalid_input', field: '/name' });
    const array = await sys.fetch('/v1/tools/parties.create:invoke', { key: ownerKey, body: '[]' });
    expect(array.body).toMatchObject({ code: 'invalid_input', field: '' });
  });

  it('declares the JSON refusals of an oversized request line or headers (414, 431)', async () => {
    const doc = (await sys.fetch('/openapi.json')).body;
    expect(doc.components.responses.Refusal414.content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['uri_too_long']);
    expect(doc.components.responses.Refusal431.content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['headers_too_large']);
  });
});
