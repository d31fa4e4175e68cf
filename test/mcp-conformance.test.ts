import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../scripts/infra.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// The public MCP conformance suite (@modelcontextprotocol/conformance) against /mcp.
//
// The suite's client sends no credential, and /mcp (a product endpoint) refuses calls without
// one; a local forwarder adds the workspace's API key to each request, as an MCP host
// configured with a key would, and changes nothing else (Origin and the body pass as sent).
//
// Scenarios that apply to a product server, and pass: server-initialize, ping, tools-list,
// server-sse-multiple-streams, dns-rebinding-protection; server-sse-polling passes with its two
// advisory warnings (no priming event / retry field: /mcp keeps no event store, so a dropped
// 2025 stream is not resumable; 2026-07-28 needs none). The others need the suite's reference
// fixtures, which a product server does not have and should not grow: tools named
// test_simple_text, test_image_content, test_error_handling, json_schema_2020_12_tool…
// (tools-call-*, json-schema-2020-12, elicitation-*), the suite's own resources (resources-*:
// Cuadra's one resource is the MCP Apps dashboard, test/mcp-apps.test.ts), and the prompts,
// completion and logging capabilities (prompts-*, completion-complete, logging-set-level,
// tools-call-with-logging), which Cuadra does not offer.
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'] as const;
const ADVISORY_WARNINGS_ONLY = ['server-sse-polling'] as const;

let sys: TestSystem;
let key: string;
let forwarder: Server;
let mcpUrl: string;
let outDir: string;

/** Forwards every request to the gateway's /mcp with `Authorization: Bearer <key>` added. */
function forwardWithKey(target: string, apiKey: string) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)) headers.set(name, value);
    }
    headers.set('authorization', `Bearer ${apiKey}`);
    const aborted = new AbortController();
    res.once('close', () => aborted.abort());
    try {
      const upstream = await fetch(target, {
        method: req.method,
        headers,
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
        signal: aborted.signal,
      });
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      if (!upstream.body) return void res.end();
      Readable.fromWeb(upstream.body as unknown as NodeReadableStream<Uint8Array>).on('error', () => res.end()).pipe(res);
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  };
}

/**
 * The 2026-07-28 revision's scenarios are in the suite's 0.2.0 pre-releases only (0.1.16, `latest`, has none);
 * installed beside it under an alias (gateway/package.json), pinned. Its server scenarios that apply to a product
 * server: server-stateless (SEP-2575: `server/discover`, the `_meta` envelope, versions, routing headers) and
 * http-header-validation (SEP-2243), wholly but for checks that need the suite's diagnostic tools; of the tasks
 * extension's, the checks that need no fixture tool (slow_compute, greet, failing_job are the suite's own).
 * Not applicable: caching and sep-2164 (prompts/resources, which Cuadra does not offer),
 * http-custom-header-server-validation (no tool declares `x-mcp-header`), input-required-result-* (fixture tools).
 */
const SUITE_2026 = 'mcp-conformance-2026';
/** Checks of a 2026-07-28 scenario that need one of the suite's own diagnostic tools: "Not testable" on any product server. */
const NEEDS_SUITE_TOOL = /^Not testable: server does not list the diagnostic tool/;
/** Checks of the tasks extension's scenarios that need no fixture tool, each of which must pass. */
const TASKS_CHECKS = {
  'tasks-capability-negotiation': ['tasks-extension-advertised', 'sep-2663-tasks-methods-non-declaring'],
  'tasks-request-headers': ['tasks-headers-reject-mismatched-method'],
} as const;

function runScenario(scenario: string, suite = path.join('@modelcontextprotocol', 'conformance')): Promise<{ code: number; output: string; checks: { id: string; status: string; errorMessage?: string }[] }> {
  const dir = path.join(outDir, scenario);
  const cli = path.join(repoRoot, 'node_modules', suite, 'dist', 'index.js');
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, 'server', '--url', mcpUrl, '--scenario', scenario, '-o', dir], { timeout: 60_000, cwd: outDir }, (err, stdout, stderr) => {
      const checks = readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('checks.json'))
        .flatMap((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { id: string; status: string; errorMessage?: string }[]);
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr, checks });
    });
  });
}

beforeAll(async () => {
  sys = await startTestSystem('mcpconf');
  key = (await sys.workspace('Conformidad SAS')).api_key;
  forwarder = createServer(forwardWithKey(`${sys.gatewayUrl}/mcp`, key));
  await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
  // `localhost`: the DNS-rebinding scenario requires a loopback name in the URL.
  mcpUrl = `http://localhost:${(forwarder.address() as AddressInfo).port}/mcp`;
  outDir = mkdtempSync(path.join(tmpdir(), 'mcp-conformance-'));
});
afterAll(async () => {
  forwarder?.closeAllConnections();
  await new Promise((resolve) => forwarder?.close(resolve));
  await sys?.stop();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

describe('MCP conformance suite, server scenarios that apply to a product server', () => {
  it.each(APPLICABLE)('%s passes', async (scenario) => {
    const result = await runScenario(scenario);
    const failed = result.checks.filter((c) => c.status === 'FAILURE');
    expect(failed, result.output).toEqual([]);
    expect(result.checks.filter((c) => c.status === 'SUCCESS').length, result.output).toBeGreaterThan(0);
    expect(result.code, result.output).toBe(0);
  });

  it.each(ADVISORY_WARNINGS_ONLY)('%s passes with advisory warnings only', async (scenario) => {
    const result = await runScenario(scenario);
    expect(result.checks.filter((c) => c.status === 'FAILURE'), result.output).toEqual([]);
    expect(result.checks.length, result.output).toBeGreaterThan(0);
    expect(result.code, result.output).toBe(0);
  });
});

describe('MCP conformance suite, the 2026-07-28 revision (suite 0.2.0-alpha.12)', () => {
  it.each(['server-stateless', 'http-header-validation'])('%s passes every check a product server can be tested on', async (scenario) => {
    const result = await runScenario(scenario, SUITE_2026);
    const failed = result.checks.filter((c) => c.status === 'FAILURE');
    expect(failed.filter((c) => !NEEDS_SUITE_TOOL.test(c.errorMessage ?? '')), result.output).toEqual([]);
    expect(result.checks.filter((c) => c.status === 'SUCCESS').length, result.output).toBeGreaterThan(10);
  });

  it.each(Object.entries(TASKS_CHECKS))('%s: the checks that need no fixture tool pass', async (scenario, ids) => {
    const result = await runScenario(scenario, SUITE_2026);
    for (const id of ids) expect(result.checks.filter((c) => c.id === id).map((c) => c.status), `${id}\n${result.output}`).toEqual(['SUCCESS']);
  });
});
