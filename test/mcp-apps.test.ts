import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport, type CallToolResult, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';
import { RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, SHOTS } from './helpers/browser.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// MCP Apps (io.modelcontextprotocol/ui, SEP-1865 2026-01-26; modelcontextprotocol/ext-apps
// specification/2026-01-26/apps.mdx) as a host meets them: the official MCP client lists and reads
// the ui:// dashboard, the extension's own host bridge (AppBridge, from the published package) runs
// the View in a sandboxed iframe of a tiny host page in Chromium, with the CSP the spec has a host
// build from the resource's _meta.ui.csp, and relays the View's JSON-RPC to the MCP client.

const UI = 'io.modelcontextprotocol/ui';
const APP = 'ui://cuadra/dashboard';
let sys: TestSystem;
let key: string;
let otherKey: string;
let workspace: string;
let browser: { context: BrowserContext; close(): Promise<void> };
const servers: HttpServer[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  sys = await startTestSystem('mcpapps');
  const ws = await sys.workspace('Apps Mcp SAS');
  key = ws.api_key;
  workspace = ws.workspace_id;
  otherKey = (await sys.workspace('Otra Apps SAS')).api_key;
  for (const name of ['Tienda Andina SAS', 'Ferretería Búho Ltda']) await sys.output('parties.create', { name, kind: 'customer' }, key);
  browser = await openBrowser({ width: 1100, height: 760 });
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const s of servers) s.close();
  await browser?.close();
  await sys?.stop();
});

async function connect(apiKey: string, ui: boolean, revision: '2026-07-28' | '2025-11-25' = '2026-07-28'): Promise<Client> {
  const client = new Client(
    { name: 'apps-host-test', version: '1.0.0' },
    { capabilities: ui ? { extensions: { [UI]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {}, versionNegotiation: { mode: revision === '2026-07-28' ? { pin: revision } : 'legacy' } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${sys.gatewayUrl}/mcp`), { authProvider: { token: async () => apiKey } }));
  clients.push(client);
  return client;
}

/** An HTTP server on a free loopback port answering with `handle`. */
async function serve(handle: Parameters<typeof createServer>[1]): Promise<number> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The CSP a host builds from the resource's `_meta.ui.csp` (SEP-1865 § Security Implications, "CSP Construction from Metadata"). */
function hostCsp(csp: { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[]; baseUriDomains?: string[] } = {}): string {
  const res = (csp.resourceDomains ?? []).join(' ');
  return [
    "default-src 'none'", `script-src 'self' 'unsafe-inline' ${res}`, `style-src 'self' 'unsafe-inline' ${res}`, `connect-src 'self' ${(csp.connectDomains ?? []).join(' ')}`,
    `img-src 'self' data: ${res}`, `font-src 'self' ${res}`, `media-src 'self' data: ${res}`, `frame-src ${(csp.frameDomains ?? []).join(' ') || "'none'"}`,
    "object-src 'none'", `base-uri ${(csp.baseUriDomains ?? []).join(' ') || "'self'"}`,
  ].join('; ');
}

/** The host page's side of postMessage as an MCP transport for AppBridge: the page relays the iframe's messages here and ours to it. */
async function relayTo(page: Page): Promise<Transport> {
  const transport: Transport = {
    start: async () => undefined,
    send: async (message: JSONRPCMessage) => { await page.evaluate((m) => (globalThis as unknown as { toView(m: unknown): void }).toView(m), message); },
    close: async () => { transport.onclose?.(); },
  };
  await page.exposeFunction('toHost', (message: JSONRPCMessage) => transport.onmessage?.(message));
  return transport;
}

describe('the dashboard as an MCP App', () => {
  it('is listed and read only for a host that declared the extension, with dashboards.render pointing to it, the same template for every workspace', async () => {
    const host = await connect(key, true);
    const { resources } = await host.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: APP, mimeType: 'text/html;profile=mcp-app' })]);
    const render = (await host.listTools()).tools.find((t) => t.name === 'dashboards.render')!;
    expect(render._meta?.ui).toEqual({ resourceUri: APP, visibility: ['model', 'app'] });
    const read = await host.readResource({ uri: APP });
    const content = read.contents[0] as { uri: string; mimeType: string; text: string; _meta: { ui: { csp: Record<string, string[]> } } };
    expect(content).toMatchObject({ uri: APP, mimeType: 'text/html;profile=mcp-app' });
    expect(content._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
    expect(content.text).toMatch(/^<!doctype html>/);
    // A template: no credential, no workspace, no record of it; another workspace reads the very same bytes.
    for (const secret of [key, key.split('_').pop()!, workspace, 'Tienda Andina']) expect(content.text).not.toContain(secret);
    const other = await connect(otherKey, true);
    expect(((await other.readResource({ uri: APP })).contents[0] as { text: string }).text).toBe(content.text);

    // A 2025-11-25 session declares it once, at initialize.
    const session = await connect(key, true, '2025-11-25');
    expect(session.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect((await session.listResources()).resources.map((r) => r.uri)).toEqual([APP]);

    const plain = await connect(key, false);
    expect((await plain.listResources()).resources).toEqual([]);
    expect((await plain.listTools()).tools.find((t) => t.name === 'dashboards.render')!._meta?.ui).toBeUndefined();
    await expect(plain.readResource({ uri: APP })).rejects.toMatchObject({ code: -32021 });
    // Resource not found: -32602 with the uri as its data, as the SDK (and the current spec) answer it.
    await expect(host.readResource({ uri: 'ui://cuadra/nothing' })).rejects.toMatchObject({ code: -32602, data: { uri: 'ui://cuadra/nothing' } });
  });

  it('renders in a sandboxed iframe from the host\'s tool result, calls tools only through the host (one ledger entry each, policies applied), and its CSP blocks an outside fetch', async () => {
    const host = await connect(key, true);
    const content = (await host.readResource({ uri: APP })).contents[0] as unknown as { text: string; _meta: { ui: { csp: Record<string, string[]> } } };
    const args = {
      blocks: [
        { type: 'heading', title: 'Clientes desde el asistente', variant: 'h2' },
        { type: 'records', title: 'Clientes', key: 'cust', records: { source: 'parties', kind: 'customer' } },
        { type: 'actions', actions: [
          { tool: 'parties.create', label: 'Quick add', values: { kind: 'customer', name: 'Quick App SAS' } },
          { tool: 'items.create', label: 'Nuevo servicio', values: { name: 'Asesoría desde la app', kind: 'service', price: { amount: 100_000, currency: 'COP' }, tax_rate_ppm: 190_000 } },
        ] },
      ],
    };
    const result = await host.callTool({ name: 'dashboards.render', arguments: args }) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const figures = (result.structuredContent as { blocks: { type: string; records_data?: { rows: { name: string }[] } }[] }).blocks.find((b) => b.type === 'records')!.records_data!.rows.map((r) => r.name);
    expect(figures.sort()).toEqual(['Ferretería Búho Ltda', 'Tienda Andina SAS']);

    // The outside world the View must not reach, and the tiny host: its page on one origin, the View on another (localhost vs 127.0.0.1).
    const outside: string[] = [];
    const outsidePort = await serve((req, res) => { outside.push(req.url!); res.setHeader('access-control-allow-origin', '*'); res.end('stolen'); });
    const port = await serve((req, res) => {
      if (req.url === '/view') {
        res.setHeader('content-security-policy', hostCsp(content._meta.ui.csp));
        res.setHeader('content-type', 'text/html; charset=utf-8');
        return res.end(content.text);
      }
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><html lang="en"><head><title>Tiny MCP host</title></head><body><h1>Tiny MCP host</h1>
<iframe id="app" title="Cuadra dashboard" sandbox="allow-scripts" src="http://localhost:${(req.socket.address() as AddressInfo).port}/view" style="width:1040px;height:600px;border:1px solid #999"></iframe>
<script>const frame = document.getElementById('app');
window.addEventListener('message', (e) => { if (e.source === frame.contentWindow) window.toHost(e.data); });
window.toView = (m) => frame.contentWindow.postMessage(m, '*');</script></body></html>`);
    });

    const page = await browser.context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) violations.push(m.text()); });
    const bridge = new AppBridge(host, { name: 'tiny-host', version: '1.0.0' }, { serverTools: {}, logging: {} }, { hostContext: { theme: 'light', locale: 'es-CO', platform: 'web' } });
    bridge.oninitialized = () => {
      void bridge.sendToolInput({ arguments: args }).then(() => bridge.sendToolResult(result));
    };
    await bridge.connect(await relayTo(page));
    await page.goto(`http://127.0.0.1:${port}/`);
    const view = page.frameLocator('#app');
    await view.locator('body[data-ready="true"]').waitFor({ timeout: 10_000 });
    // The dashboard's data, as the canvas rendered it: every customer row of the records block.
    const rows = await view.locator('#canvas table tr').allInnerTexts();
    for (const name of figures) expect(rows.some((r) => r.includes(name)), rows.join('\n')).toBe(true);
    await expect(view.getByRole('heading', { name: 'Clientes desde el asistente' }).innerText()).resolves.toBe('Clientes desde el asistente');

    // A tool call from the View: through the host bridge and the MCP client into the one pipeline — one ledger entry.
    const ledger = sys.governanceFor().ledger;
    const before = await ledger.entries.countDocuments({ workspace, tool: 'parties.create' });
    await view.getByRole('button', { name: 'Quick add' }).click();
    await view.locator('.action-result .ok').waitFor({ timeout: 10_000 });
    const entries = await ledger.entries.find({ workspace, tool: 'parties.create' }).sort({ seq: 1 }).lean();
    expect(entries.length - before).toBe(1);
    expect(entries.at(-1)).toMatchObject({ outcome: 'ok' });
    expect((await sys.output('parties.list', { search: 'Quick App SAS' }, key)).rows).toHaveLength(1);

    // The workspace's policies apply to the View's calls as to any: a held tool waits for a person, and nothing is created.
    await sys.output('policies.create', { name: 'Hold new items', priority: 50, match: { tools: ['items.create'] }, effect: 'hold' }, key);
    await view.getByRole('button', { name: 'Nuevo servicio' }).click();
    const waiting = await view.locator('.action-result .pending').innerText({ timeout: 10_000 });
    const approvalId = /apr_[A-Za-z0-9_-]+/.exec(waiting)?.[0];
    expect(approvalId, waiting).toBeDefined();
    expect(await ledger.entries.findOne({ workspace, tool: 'items.create' }).lean()).toMatchObject({ approval_id: approvalId });
    expect((await sys.output('items.list', { search: 'Asesoría desde la app' }, key)).rows).toHaveLength(0);

    // Until now neither CSP (the host's, the View's own) refused anything: the dashboard runs within them.
    expect(violations).toEqual([]);
    // The View reaches no one but its host: an outside fetch is refused by the CSP and never arrives.
    const app = page.frames().find((f) => f.url().endsWith('/view'))!;
    const attempt = await app.evaluate(async (url) => fetch(url).then(() => 'reached', (e: Error) => `blocked: ${e.message}`), `http://127.0.0.1:${outsidePort}/steal`);
    expect(attempt).toMatch(/^blocked/);
    expect(outside).toEqual([]);
    expect(violations.some((v) => v.includes('connect-src'))).toBe(true);

    await page.screenshot({ path: path.join(SHOTS, 'mcp-app-dashboard.png'), fullPage: true });
    await bridge.close();
    await page.close();
  });
});
