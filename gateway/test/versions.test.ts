import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../src/catalog.ts';
import { API_VERSIONS, CURRENT_API_VERSION } from '../src/versions/dates.ts';
import { startInProcessGateway, type InProcessGateway } from './helpers/gateway.ts';

// Issue 39, versions: every answer states the dated version it was answered as (`Cuadra-Version`),
// a workspace is answered as the version it started on unless the request names another, an
// unknown version is refused, and a deprecated tool says so on every answer (RFC 9745, RFC 8594).

// The built catalog, with tools.search declared deprecated (since 2026-12-01, sunset 2027-06-30, successor
// tools.describe) — no real tool is deprecated yet; the headers come from the catalog entry, as they will for one.
const built = Catalog.fromBuild();
const catalog = new Catalog(built.entries.map((e) => (e.name === 'tools.search' ? { ...e, deprecated: { since: '2026-12-01', sunset: '2027-06-30', successor: 'tools.describe' } } : e)));

let gw: InProcessGateway;
let key: string;
let workspace: string;

beforeAll(async () => {
  gw = await startInProcessGateway('versions', { catalog });
  ({ workspace_id: workspace, api_key: key } = await gw.gateway.identity.createWorkspace({ name: 'Versiones SAS', ownerEmail: `versions-${Date.now()}@example.com` }));
}, 120_000);
afterAll(async () => {
  await gw?.close();
});

const invoke = (tool: string, input: unknown, headers: Record<string, string> = {}, credential = key) =>
  fetch(`${gw.url}/v1/tools/${tool}:invoke`, { method: 'POST', headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(input) });

async function mcp(message: unknown, headers: Record<string, string> = {}) {
  return fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...message as object }),
  });
}

describe('Cuadra-Version', () => {
  it('a new workspace is pinned to the version it started on (stored with it), and every answer says so: REST list and invoke, MCP, GraphQL', async () => {
    expect(CURRENT_API_VERSION).toBe('2026-11-01');
    const stored = await gw.db.collection('workspaces').findOne({ _id: workspace as never });
    expect(stored?.api_version).toBe('2026-11-01');
    const list = await fetch(`${gw.url}/v1/tools`, { headers: { authorization: `Bearer ${key}` } });
    expect(list.status).toBe(200);
    expect(list.headers.get('cuadra-version')).toBe('2026-11-01');
    const call = await invoke('tools.describe', { name: 'invoices.post' });
    expect(call.status).toBe(200);
    expect(call.headers.get('cuadra-version')).toBe('2026-11-01');
    // A refusal after the caller is known states it too.
    const refused = await invoke('tools.describe', { name: 7 });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('cuadra-version')).toBe('2026-11-01');
    const init = await mcp({ id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'versions-test', version: '1' } } });
    expect(init.status).toBe(200);
    expect(init.headers.get('cuadra-version')).toBe('2026-11-01');
    const graph = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(graph.headers.get('cuadra-version')).toBe('2026-11-01');
  });

  it('a workspace older than versions (no pin stored) is answered as the first version; the pin is read from the workspace, not assumed', async () => {
    const older = await gw.gateway.identity.createWorkspace({ name: 'Antigua SAS', ownerEmail: `older-${Date.now()}@example.com` });
    await gw.db.collection('workspaces').updateOne({ _id: older.workspace_id as never }, { $unset: { api_version: '' } });
    const call = await invoke('tools.describe', { name: 'invoices.post' }, {}, older.api_key);
    expect(call.status).toBe(200);
    expect(call.headers.get('cuadra-version')).toBe(API_VERSIONS[0]);
  });

  it('a request naming a version is answered as it; an unknown version is refused 422 invalid_input on every surface, and nothing is answered but the refusal', async () => {
    const named = await invoke('tools.describe', { name: 'invoices.post' }, { 'cuadra-version': '2026-11-01' });
    expect(named.status).toBe(200);
    expect(named.headers.get('cuadra-version')).toBe('2026-11-01');
    for (const bad of ['2025-01-01', 'latest', '2026-11-01x', '']) {
      const res = await invoke('tools.describe', { name: 'invoices.post' }, { 'cuadra-version': bad });
      expect(res.status, bad).toBe(422);
      const body = (await res.json()) as { code: string; field: string; error: string };
      expect(body.code).toBe('invalid_input');
      expect(body.field).toBe('');
      expect(body.error).toContain('2026-11-01');
      expect(body).not.toHaveProperty('output');
      expect(res.headers.get('cuadra-version')).toBeNull();
    }
    expect((await fetch(`${gw.url}/v1/tools`, { headers: { authorization: `Bearer ${key}`, 'cuadra-version': '1999-01-01' } })).status).toBe(422);
    expect((await mcp({ id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'v', version: '1' } } }, { 'cuadra-version': '1999-01-01' })).status).toBe(422);
  });
});

describe('deprecated tools (RFC 9745, RFC 8594)', () => {
  it('every answer of a deprecated tool carries Deprecation (an RFC 9651 Date), Sunset (an HTTP-date) and Links to its docs and successor; other tools carry none', async () => {
    const res = await invoke('tools.search', { query: 'factura' });
    expect(res.status).toBe(200);
    // 2026-12-01T00:00:00Z: 2026-01-01 is day 20454 since 1970-01-01 (56 years, 14 of them leap: 56×365+14);
    // Jan–Nov 2026 add 31+28+31+30+31+30+31+31+30+31+30 = 334 days → day 20788; × 86,400 s = 1,796,083,200.
    expect(res.headers.get('deprecation')).toBe('@1796083200');
    // 2027-06-30 is a Wednesday (2027-01-01 is a Friday; +180 days = 25 weeks + 5 days → Wednesday).
    expect(res.headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    const links = res.headers.get('link')!.split(/,\s*(?=<)/);
    expect(links).toContain('<http://127.0.0.1/docs/tools/tools.search.md>; rel="deprecation"; type="text/markdown"');
    expect(links).toContain('<http://127.0.0.1/docs/tools/tools.describe.md>; rel="successor-version"; type="text/markdown"');
    // A refusal of the deprecated tool says so too; a tool that is not deprecated says nothing of it.
    const refused = await invoke('tools.search', {});
    expect(refused.status).toBe(422);
    expect(refused.headers.get('deprecation')).toBe('@1796083200');
    const other = await invoke('tools.describe', { name: 'invoices.post' });
    expect(other.headers.get('deprecation')).toBeNull();
    expect(other.headers.get('sunset')).toBeNull();
  });

  it('OpenAPI marks the operation deprecated, MCP the tool\'s _meta, the catalog and the Markdown page name the successor', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    expect(doc.paths['/v1/tools/tools.search:invoke'].post.deprecated).toBe(true);
    expect(doc.paths['/v1/tools/tools.describe:invoke'].post.deprecated).toBeUndefined();
    expect(doc.components.parameters.CuadraVersion).toMatchObject({ name: 'Cuadra-Version', in: 'header', schema: { enum: ['2026-11-01'] } });
    const list = (await (await fetch(`${gw.url}/v1/tools?search=tools`, { headers: { authorization: `Bearer ${key}` } })).json()) as { tools: { name: string; deprecated?: unknown }[] };
    expect(list.tools.find((t) => t.name === 'tools.search')?.deprecated).toEqual({ since: '2026-12-01', sunset: '2027-06-30', successor: 'tools.describe' });
    const page = await (await fetch(`${gw.url}/docs/tools/tools.search.md`)).text();
    expect(page).toContain('- **Deprecated** since 2026-12-01, may stop answering after 2027-06-30; call [tools.describe](http://127.0.0.1/docs/tools/tools.describe.md) instead');
    const init = await mcp({ id: 3, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'versions-test', version: '1' } } });
    const session = init.headers.get('mcp-session-id')!;
    await mcp({ method: 'notifications/initialized' }, { 'mcp-session-id': session });
    const listed = await mcp({ id: 4, method: 'tools/list', params: {} }, { 'mcp-session-id': session });
    const text = await listed.text();
    const json = JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data: '))!.slice(6));
    const tool = json.result.tools.find((t: any) => t.name === 'tools.search');
    expect(tool._meta['io.cuadra/deprecated']).toEqual({ since: '2026-12-01', sunset: '2027-06-30', successor: 'tools.describe' });
  });
});
