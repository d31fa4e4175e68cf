// Ledger-Receipt on read answers (CONTRACT.md §9, issue 33, ready14): "each answer that wrote a
// ledger entry carries `Ledger-Receipt`" — and one that wrote none carries none. Over REST and MCP
// alike, for reads of every kind (a subgraph's read tool, the gateway's own, the fast pass and the
// full pipeline, a keyed read and its replay, a read refused by its owner, by the gateway, a dry run,
// a read asked again at once), the ledger's entries of the workspace are counted before and after
// each call: an answer carries a receipt exactly when the call wrote one entry, and the receipt names
// that entry (its seq and hash).
import type { Connection } from 'mongoose';
import { connectDatabase } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpRequest, mcpSession } from './helpers/mcp-session.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

let sys: TestSystem;
let governanceDb: Connection;
let ws: { workspace_id: string; api_key: string };
let partyId: string;
let session: string;

beforeAll(async () => {
  sys = await startTestSystem('read-receipts');
  ws = await sys.workspace('Recibos de lectura SAS');
  partyId = (await sys.output('parties.create', { name: 'Cliente Recibo', kind: 'customer' }, ws.api_key)).party.id;
  governanceDb = await connectDatabase(process.env.MONGO_URL!, `${sys.gatewayDb.replace(/_gateway$/, '')}_governance`);
  const opened = await mcpSession(sys.gatewayUrl, ws.api_key);
  if (!('session' in opened)) throw new Error(`MCP session refused: ${opened.status}`);
  session = opened.session;
}, 180_000);
afterAll(async () => {
  await governanceDb?.close();
  await sys?.stop();
});

/** The workspace's last ledger entry (seq and hash), or null. */
async function head(): Promise<{ seq: number; hash: string } | null> {
  const last = await governanceDb.collection('ledger').find({ workspace: ws.workspace_id }, { projection: { seq: 1, hash: 1 } }).sort({ seq: -1 }).limit(1).next();
  return last ? { seq: last.seq as number, hash: last.hash as string } : null;
}

/** Runs `call`, then says how many entries it wrote and the receipt its answer carried. */
async function observed(label: string, call: () => Promise<{ status: number; receipt: string | null }>): Promise<{ label: string; status: number; wrote: number; receipt: string | null; names: boolean }> {
  const before = await head();
  const { status, receipt } = await call();
  // An entry is written before its answer: whatever the call wrote is in the ledger now.
  const after = await head();
  const wrote = (after?.seq ?? 0) - (before?.seq ?? 0);
  const [seq, hash] = (receipt ?? '').split(';');
  return { label, status, wrote, receipt, names: receipt !== null && Number(seq) === after?.seq && hash === after?.hash };
}

const rest = (tool: string, input: unknown, headers: Record<string, string> = {}) => async () => {
  // Raw (no output check): a dry run's answer is the decision, not the tool's output.
  const r = await sys.fetch(`/v1/tools/${tool}:invoke`, { method: 'POST', key: ws.api_key, body: input, headers });
  return { status: r.status, receipt: r.headers.get('ledger-receipt') };
};
const mcp = (tool: string, args: unknown, meta?: Record<string, unknown>) => async () => {
  const r = await mcpRequest(sys.gatewayUrl, ws.api_key, session, 'tools/call', JSON.stringify({ name: tool, arguments: args, ...(meta ? { _meta: meta } : {}) }));
  const result = r.result ?? {};
  return { status: result.isError ? 400 : r.status, receipt: (result._meta?.['io.cuadra/ledger-receipt'] as string | undefined) ?? null };
};

describe('Ledger-Receipt on read answers', () => {
  it('is carried by every answer that wrote a ledger entry, names that entry, and by no other — REST and MCP alike', async () => {
    const seen = [];
    for (const [surface, call] of [['REST', rest], ['MCP', mcp]] as const) {
      seen.push(await observed(`${surface} parties.list`, call('parties.list', {})));
      seen.push(await observed(`${surface} parties.list again`, call('parties.list', {})));
      seen.push(await observed(`${surface} parties.get`, call('parties.get', { id: partyId })));
      seen.push(await observed(`${surface} parties.get unknown`, call('parties.get', { id: 'pty_nadie' })));
      seen.push(await observed(`${surface} parties.list bad input`, call('parties.list', { nope: 1 })));
      seen.push(await observed(`${surface} records.list`, call('records.list', { source: 'parties' })));
      seen.push(await observed(`${surface} members.list`, call('members.list', {})));
      seen.push(await observed(`${surface} ledger.list`, call('ledger.list', {})));
      seen.push(await observed(`${surface} ledger.verify`, call('ledger.verify', {})));
    }
    seen.push(await observed('REST parties.list keyed', rest('parties.list', {}, { 'Idempotency-Key': 'lectura-1' })));
    seen.push(await observed('REST parties.list keyed replay', rest('parties.list', {}, { 'Idempotency-Key': 'lectura-1' })));
    seen.push(await observed('REST parties.list dry run', rest('parties.list', {}, { 'X-Dry-Run': 'true' })));
    seen.push(await observed('MCP parties.list dry run', mcp('parties.list', {}, { 'io.cuadra/dry-run': true })));
    seen.push(await observed('REST unknown tool', rest('parties.nada', {})));
    console.log('[read-receipts]', seen.map((s) => `${s.label}: ${s.status} wrote ${s.wrote} receipt ${s.receipt ? (s.names ? 'names it' : 'OTHER') : 'none'}`));
    for (const s of seen) {
      expect(s.wrote, s.label).toBeLessThanOrEqual(1);
      if (s.wrote === 1) expect(s.names, `${s.label}: wrote an entry, receipt ${s.receipt}`).toBe(true);
      else expect(s.receipt, `${s.label}: wrote no entry`).toBeNull();
    }
    // The reads that ran wrote their entry (every attempt has one): the dry runs alone wrote none.
    expect(seen.filter((s) => s.wrote === 0).map((s) => s.label)).toEqual(['REST parties.list dry run', 'MCP parties.list dry run']);
  }, 120_000);
});
