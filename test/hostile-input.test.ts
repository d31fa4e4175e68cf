// No request breaks the store (issue 13, CONTRACT.md §9): hostile bodies are refused with the
// contract's code and pointer before anything walks them, each authenticated attempt is on the
// ledger, and afterwards the store still answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpRequest, mcpSession as openMcpSession } from './helpers/mcp-session.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let key: string;
let workspace: string;

beforeAll(async () => {
  sys = await startTestSystem('hostile');
  ({ api_key: key, workspace_id: workspace } = await sys.workspace('Hostile SAS'));
});
afterAll(async () => {
  await sys?.stop();
});

/** JSON text of `{"a": {"a": …}}` nested `depth` objects deep (as text: JSON.stringify itself overflows past a few thousand). */
const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** A small nested value (for depths JSON.stringify handles). */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}
/** JSON text of a block tree nested `depth` sections deep through `children`. */
const nestedBlocksText = (depth: number) => `${'{"type":"section","children":['.repeat(depth)}{"type":"text","markdown":"x"}${']}'.repeat(depth)}`;
const deepPointer = (prefix: string, levels: number) => prefix + '/a'.repeat(levels);

/** Hostile bodies → the answer the contract gives. The body is sent as raw text where it must be. */
const CASES: { name: string; tool: string; body: unknown | string; status: number; code: string; field?: string | RegExp }[] = [
  { name: 'free-form data nested 1,500 deep (took the store down before)', tool: 'dashboards.save', body: `{"title":"d","blocks":[{"type":"text","markdown":"x","data":${nestedText(1500)}}]}`, status: 422, code: 'invalid_input', field: deepPointer('/blocks/0/data', 29) },
  { name: 'data nested 5,000 deep', tool: 'dashboards.save', body: `{"title":"d","blocks":[{"type":"text","data":${nestedText(5000)}}]}`, status: 422, code: 'invalid_input', field: /^\/blocks\/0\/data(\/a)+$/ },
  { name: 'children nested 9,000 deep', tool: 'dashboards.save', body: `{"title":"d","blocks":[${nestedBlocksText(9000)}]}`, status: 422, code: 'invalid_input', field: /^\/blocks\/0(\/children\/0)+$/ },
  { name: 'render of blocks nested 3,500 deep', tool: 'dashboards.render', body: `{"blocks":[${nestedBlocksText(3500)}]}`, status: 422, code: 'invalid_input', field: /^\/blocks\/0(\/children\/0)+$/ },
  { name: 'nesting 40,000 deep (just under the size limit) in a tool that takes no such field', tool: 'parties.list', body: `{"search":${nestedText(40_000)}}`, status: 422, code: 'invalid_input', field: deepPointer('/search', 31) },
  { name: 'depth 32 is the limit (33 refused)', tool: 'dashboards.save', body: { title: 'd', blocks: [{ type: 'text', data: nested(30) }] }, status: 422, code: 'invalid_input', field: deepPointer('/blocks/0/data', 29) },
  { name: 'a string over 64 KiB', tool: 'dashboards.save', body: { title: 'd', blocks: [{ type: 'text', data: 'x'.repeat(64 * 1024 + 1) }] }, status: 422, code: 'invalid_input', field: '/blocks/0/data' },
  { name: 'an array over 1,000 items', tool: 'dashboards.save', body: { title: 'd', blocks: [{ type: 'text', data: Array.from({ length: 1001 }, () => 0) }] }, status: 422, code: 'invalid_input', field: '/blocks/0/data' },
  { name: 'a lone surrogate in a value', tool: 'parties.create', body: '{"name":"Tienda \\ud800 Andina","kind":"customer"}', status: 422, code: 'invalid_input', field: '/name' },
  { name: 'a lone surrogate in a key', tool: 'dashboards.save', body: '{"title":"d","blocks":[{"type":"text","data":{"\\udc00":1}}]}', status: 422, code: 'invalid_input', field: '/blocks/0/data/\udc00' },
  { name: 'a NUL in a key (BSON cannot store it: schemathesis found a 500 in render with an Idempotency-Key)', tool: 'dashboards.render', body: '{"blocks":[{"type":"text","markdown":"x","data":{"a\\u0000b":1}}]}', status: 422, code: 'invalid_input', field: '/blocks/0/data/a\u0000b' },
  { name: 'money past ±10^15 (1e9 × 1e15 was stored as 1e+24)', tool: 'items.create', body: { name: 'x', kind: 'service', price: { amount: 1e16, currency: 'COP' } }, status: 422, code: 'invalid_input', field: '/price/amount' },
  { name: 'malformed UTF-8', tool: 'parties.create', body: Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), status: 422, code: 'invalid_input', field: '' },
  { name: 'a JSON array body', tool: 'parties.list', body: '[1,2]', status: 422, code: 'invalid_input', field: '' },
  { name: 'a JSON string body', tool: 'parties.list', body: '"x"', status: 422, code: 'invalid_input', field: '' },
  { name: 'not JSON', tool: 'parties.list', body: '{', status: 422, code: 'invalid_input', field: '' },
];

async function send(tool: string, body: unknown, credential: string | null = key) {
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (credential) headers.authorization = `Bearer ${credential}`;
  const res = await fetch(`${sys.gatewayUrl}/v1/tools/${tool}:invoke`, { method: 'POST', headers, body: raw });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) };
}

describe('hostile bodies', () => {
  it.each(CASES)('$name → $status $code', async ({ tool, body, status, code, field }) => {
    const before = await sys.governanceFor().ledger.entries.countDocuments({ workspace, tool });
    const res = await send(tool, body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    if (typeof field === 'string') expect(res.body.field).toBe(field);
    else if (field) expect(res.body.field).toMatch(field);
    // The attempt passed authentication: it is on the ledger, with no digest of the hostile input.
    await expect.poll(() => sys.governanceFor().ledger.entries.countDocuments({ workspace, tool, outcome: code })).toBeGreaterThan(0);
    expect(await sys.governanceFor().ledger.entries.countDocuments({ workspace, tool })).toBe(before + 1);
  });

  it('the limits themselves are accepted: depth 32, a 64 KiB string, 1,000 items', async () => {
    const res = await send('dashboards.save', { title: 'edge', blocks: [{ type: 'text', data: { deep: nested(27), s: 'x'.repeat(64 * 1024), list: Array.from({ length: 1000 }, (_, i) => i) } }] });
    expect(res.status).toBe(200);
    const back = await send('dashboards.get', { id: res.body.output.dashboard.id });
    expect(back.body.output.dashboard.blocks[0].data.list).toHaveLength(1000);
  });

  it('a well-formed astral character is stored and read back unchanged', async () => {
    const name = 'Tienda 😀 Andina';
    const created = await send('parties.create', { name, kind: 'customer' });
    expect(created.status).toBe(200);
    const got = await send('parties.get', { id: created.body.output.party.id });
    expect(got.body.output.party.name).toBe(name);
  });

  it('after all of it, the store still answers: /healthz proves a write and every workspace works', async () => {
    const health = await sys.fetch('/healthz');
    expect(health.status).toBe(200);
    expect(health.body.database).toBe('ok');
    const other = await sys.workspace('Bystander SAS');
    const created = await sys.invoke('parties.create', { name: 'Still here', kind: 'vendor' }, other.api_key);
    expect(created.status).toBe(200);
    expect((await sys.governanceFor().ledger.verify(workspace)).ok).toBe(true);
  });
});

describe('order of checks and methods', () => {
  it('a credential is asked for before the tool name or body is read', async () => {
    const res = await send('%', '{', null);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthenticated');
    const named = await send('%', {}, key);
    expect(named.status).toBe(404);
    expect(named.body.code).toBe('unknown_tool');
  });

  it.each([
    ['GET', '/v1/tools/parties.list:invoke', 'POST'],
    ['DELETE', '/v1/tools', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['PUT', '/mcp', 'GET, HEAD, POST, DELETE'],
    ['GET', '/oauth/token', 'POST, OPTIONS'],
    ['POST', '/openapi.json', 'GET, HEAD'],
    ['POST', '/v1/events', 'GET, HEAD'],
    // Issue 31, finding 13: pages a hand-kept table said took POST, which no route served (404).
    ['POST', '/app/members', 'GET, HEAD'],
    ['POST', '/app/ledger', 'GET, HEAD'],
    ['GET', '/app/members/invite', 'POST'],
    ['DELETE', '/app/keys', 'GET, HEAD, POST'],
    ['PUT', '/graphql', 'GET, HEAD, POST'],
    ['DELETE', '/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS'],
  ])('%s %s → 405 method_not_allowed with Allow', async (method, path, allow) => {
    const res = await fetch(`${sys.gatewayUrl}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(((await res.json()) as { code: string }).code).toBe('method_not_allowed');
  });

  it('a path that does not exist stays 404', async () => {
    const res = await sys.fetch('/v1/nothing-here', { key });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });

  it('/oauth/register answers a body that is not an object in RFC 7591 shape', async () => {
    for (const body of ['[1]', '"x"', '{']) {
      const res = await fetch(`${sys.gatewayUrl}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: string; error_description: unknown };
      expect(json.error).toBe('invalid_client_metadata');
      expect(typeof json.error_description).toBe('string');
    }
  });
});

describe('hostile XML files (issue 31, finding 5)', () => {
  it('an OFX file with an external entity is a deterministic 422 at /content, replayed as such under an Idempotency-Key; nothing imported', async () => {
    const account = await sys.invoke('bank.create_account', { name: 'Corriente', bank_name: 'Bancolombia', account_number: 'CO12345678901234', currency: 'COP' }, key);
    expect(account.status).toBe(200);
    const bank = account.body.output.account.id;
    const ofx = `<?xml version="1.0" encoding="UTF-8"?>
<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE" OLDFILEUID="NONE" NEWFILEUID="NONE"?>
<!DOCTYPE OFX [<!ENTITY ext SYSTEM "file:///etc/passwd">]>
<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1</TRNUID><STMTRS><CURDEF>COP</CURDEF><BANKACCTFROM><BANKID>007</BANKID><ACCTID>CO12345678901234</ACCTID><ACCTTYPE>CHECKING</ACCTTYPE></BANKACCTFROM>
<BANKTRANLIST><STMTTRN><TRNTYPE>CREDIT</TRNTYPE><DTPOSTED>20261112</DTPOSTED><TRNAMT>1.00</TRNAMT><FITID>X-1</FITID><NAME>&ext;</NAME></STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>`;
    const headers = { 'idempotency-key': 'hostile-ofx-1' };
    const first = await sys.invoke('bank.import_statement', { bank_id: bank, format: 'ofx', content: ofx }, key, headers);
    expect(first.status).toBe(422);
    expect(first.body).toMatchObject({ code: 'invalid_input', field: '/content' });
    const again = await sys.invoke('bank.import_statement', { bank_id: bank, format: 'ofx', content: ofx }, key, headers);
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const rows = await sys.invoke('records.list', { source: 'bank_transactions' }, key);
    expect(rows.body.output.rows).toEqual([]);
  });
});

// Issue 31: what a fuzzer and a hand still found (findings 11, 14, 16).
describe('bounds before anything walks the input, on every surface (finding 11)', () => {
  /** A 2025-11-25 MCP session of `credential`: its id, for raw JSON-RPC posts. */
  async function mcpSession(credential: string): Promise<string> {
    const opened = await openMcpSession(sys.gatewayUrl, credential);
    expect(opened).toHaveProperty('session');
    return (opened as { session: string }).session;
  }
  /** A raw tools/call whose arguments are given as JSON text (too deep for JSON.stringify here too). */
  function mcpCall(credential: string, session: string, name: string, argumentsText: string): Promise<{ status: number; result: any }> {
    return mcpRequest(sys.gatewayUrl, credential, session, 'tools/call', `{"name":${JSON.stringify(name)},"arguments":${argumentsText}}`);
  }

  it.each([3_000, 5_000, 20_000])('an MCP tools/call with arguments %i levels deep is refused 422 at the pointer, like REST, and the ledger says invalid_input', async (depth) => {
    const session = await mcpSession(key);
    const before = await sys.governanceFor().ledger.entries.countDocuments({ workspace, tool: 'dashboards.save', outcome: 'internal' });
    const { status, result } = await mcpCall(key, session, 'dashboards.save', `{"title":"d","blocks":[{"type":"text","data":${nestedText(depth)}}]}`);
    expect(status).toBe(200);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'invalid_input', field: deepPointer('/blocks/0/data', 29) });
    const rest = await send('dashboards.save', `{"title":"d","blocks":[{"type":"text","data":${nestedText(depth)}}]}`);
    expect(rest.body).toMatchObject({ code: 'invalid_input', field: result.structuredContent.field });
    expect(await sys.governanceFor().ledger.entries.countDocuments({ workspace, tool: 'dashboards.save', outcome: 'internal' })).toBe(before);
  });

  it('an MCP tools/call too large and too deep answers 413, as REST does (size is checked first, without recursion)', async () => {
    const session = await mcpSession(key);
    // parties.list takes the default 256 KiB.
    const big = `{"search":${JSON.stringify('x'.repeat(300 * 1024))},"kind":${nestedText(5_000)}}`;
    const { result } = await mcpCall(key, session, 'parties.list', big);
    expect(result.structuredContent).toMatchObject({ code: 'body_too_large' });
    expect((await send('parties.list', big)).body.code).toBe('body_too_large');
  });

  it('a GraphQL tool mutation with input variables 5,000 levels deep is refused 422 at the pointer', async () => {
    const res = await fetch(`${sys.gatewayUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: `{"query":"mutation($i: JSON!) { invokeCrmTool(tool: \\"parties.list\\", input: $i) }","variables":{"i":{"search":${nestedText(5_000)}}}}`,
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as any;
    expect(json.data.invokeCrmTool).toMatchObject({ status: 422, body: { code: 'invalid_input', field: deepPointer('/search', 31) } });
  });

  it('a GraphQL read with a JSON variable 5,000 levels deep is refused before the graph walks it, not a 500', async () => {
    const res = await fetch(`${sys.gatewayUrl}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: `{"query":"query($q: JSON!) { crmRecords(query: $q) }","variables":{"q":{"source":"parties","search":${nestedText(5_000)}}}}`,
    });
    const text = await res.text();
    expect(res.status, text).toBeLessThan(500);
    expect(res.status).toBe(422);
    expect(JSON.parse(text)).toMatchObject({ code: 'invalid_input', field: '/variables/q/search' + '/a'.repeat(31) });
    // The same through GET (variables in the query string).
    const query = new URLSearchParams({ query: 'query($q: JSON!) { crmRecords(query: $q) }', variables: `{"q":{"source":"parties","search":${nestedText(40)}}}` });
    const got = await fetch(`${sys.gatewayUrl}/graphql?${query}`, { headers: { authorization: `Bearer ${key}`, 'apollo-require-preflight': 'true' } });
    expect(got.status).toBe(422);
    expect(await got.json()).toMatchObject({ code: 'invalid_input', field: '/variables/q/search' + '/a'.repeat(31) });
    // Within the bounds, the read is answered (the composite field refuses what is not a records query).
    const fine = await fetch(`${sys.gatewayUrl}/graphql`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ query: 'query($q: JSON!) { crmRecords(query: $q) }', variables: { q: { source: 'parties', limit: 1 } } }) });
    expect(fine.status).toBe(200);
    expect(((await fine.json()) as any).data.crmRecords.source).toBe('parties');
  });

  it('/oauth/register with a redirect URI nested 5,000 arrays deep is refused in RFC 7591 shape, not a 500', async () => {
    const res = await fetch(`${sys.gatewayUrl}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"redirect_uris":[${'['.repeat(5_000)}${']'.repeat(5_000)}]}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });
});

describe('refusals at the right pointer, with a body (finding 14)', () => {
  it('an issue date at the end of the calendar is refused at /issue_date, not at a due date computed from it', async () => {
    const party = await sys.invoke('parties.create', { name: 'Calendario SAS', kind: 'customer' }, key);
    const lines = [{ description: 'Servicio', quantity: 1, unit_price: 100000, tax_rate_ppm: 0 }];
    const res = await send('invoices.create', { customer_id: party.body.output.party.id, currency: 'COP', issue_date: '9999-12-31', lines });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'invalid_input', field: '/issue_date' });
    const due = await send('invoices.create', { customer_id: party.body.output.party.id, currency: 'COP', issue_date: '2026-01-10', due_date: '9999-12-31', lines });
    expect(due.body).toMatchObject({ code: 'invalid_input', field: '/due_date' });
    // A date the calendar has, within the range, is still taken.
    const fine = await send('invoices.create', { customer_id: party.body.output.party.id, currency: 'COP', issue_date: '2026-01-10', lines });
    expect(fine.status).toBe(200);
    expect(fine.body.output.invoice.due_date).toBe('2026-02-09');
  });

  it('a property name over 64 KiB is refused at its own pointer, not its parent\'s', async () => {
    const name = 'k'.repeat(64 * 1024 + 1);
    const res = await send('dashboards.save', `{"title":"d","blocks":[{"type":"text","data":{"${name}":1}}]}`);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'invalid_input', field: `/blocks/0/data/${name}` });
  });

  it.each([20_000, 100_000, 1_000_000])('a tool name of %i characters gets a JSON 414 uri_too_long, read to the end (no connection reset)', async (length) => {
    const res = await fetch(`${sys.gatewayUrl}/v1/tools/${'a'.repeat(length)}:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(414);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({ code: 'uri_too_long', error: expect.any(String) });
  });

  it('headers over the server\'s limit get a JSON 431 headers_too_large', async () => {
    const res = await fetch(`${sys.gatewayUrl}/v1/tools/parties.list:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-padding': 'p'.repeat(20_000) }, body: '{}' });
    expect(res.status).toBe(431);
    expect(await res.json()).toMatchObject({ code: 'headers_too_large' });
    // The server is unharmed.
    expect((await send('parties.list', {})).status).toBe(200);
  });
});

describe('an absent body is {}, a present non-object is refused at "" (finding 16)', () => {
  it('no bytes at all: the tool runs with {} (or refuses at its first required argument)', async () => {
    const list = await fetch(`${sys.gatewayUrl}/v1/tools/parties.list:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(list.status).toBe(200);
    const create = await fetch(`${sys.gatewayUrl}/v1/tools/parties.create:invoke`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': '0' } });
    expect(create.status).toBe(422);
    expect(await create.json()).toMatchObject({ code: 'invalid_input', field: '/name' });
  });

  it.each([[' '], ['\n\t '], ['null'], ['[]'], ['0'], ['"{}"']])('a present body %j that is not a JSON object → 422 at ""', async (body) => {
    const res = await send('parties.list', body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'invalid_input', field: '' });
  });
});
