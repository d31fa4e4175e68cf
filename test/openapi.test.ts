import { compileErrors, validate } from '@readme/openapi-parser';
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
