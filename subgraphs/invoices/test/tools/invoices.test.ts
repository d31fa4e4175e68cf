import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, ASSERTION_HEADER, generateSigningKeyPair, localDate, sealerFromEnv, signServiceAssertion } from '@cuadra/shared';
import { startTestSubgraph, testPrincipal, testServiceKeys, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { cufe } from '../../src/e-documents/cufe.ts';
import { sealSettingsSecrets } from '../../src/lib/settings.ts';
import { BUYER, PIN, TECH_KEY, andina, configuredWorkspace, crmPeer, draft, party, startInvoices } from '../setup.ts';

let sg: TestSubgraph;

beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

describe('invoices.create', () => {
  it('computes lines, VAT and withholdings (rounded half away from zero per line)', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner, {
      lines: [
        { description: 'Asesoría', quantity: 3, unit_price: 3333333, tax_rate_ppm: 190000 },
        { description: 'Libro', quantity: 1, unit_price: 5000050, tax_rate_ppm: 50000, withholdings: [{ type: 'retefuente', rate_ppm: 25000 }] },
        { description: 'Exento', quantity: 1, unit_price: 100000, tax_rate_ppm: 0 },
      ],
      withholdings: [{ type: 'retefuente', rate_ppm: 40000 }, { type: 'reteiva', rate_ppm: 150000 }, { type: 'reteica', rate_ppm: 9660 }],
    });
    // line 0: 9,999,999 base; VAT 1,899,999.81 → 1,900,000
    expect(inv.lines[0]).toMatchObject({ subtotal: 9999999, tax: 1900000, total: 11899999 });
    // line 1: VAT 5 % of 5,000,050 = 250,002.5 → 250,003 (half away from zero)
    expect(inv.lines[1]).toMatchObject({ subtotal: 5000050, tax: 250003 });
    expect(inv.subtotal).toBe(9999999 + 5000050 + 100000);
    expect(inv.tax_total).toBe(1900000 + 250003);
    // withholdings: line 0 and 2 take the invoice rates, line 1 its own 2.5 % retefuente only.
    const w = Object.fromEntries(inv.withholdings.map((x: any) => [`${x.type}:${x.rate_ppm}`, x.amount]));
    expect(w['retefuente:40000']).toBe(400000 + 4000); // 4 % of 9,999,999 = 399,999.96 → 400,000; of 100,000 = 4,000
    expect(w['retefuente:25000']).toBe(125001); // 2.5 % of 5,000,050 = 125,001.25
    expect(w['reteiva:150000']).toBe(285000 + 0); // 15 % of 1,900,000; line 2 has no VAT
    expect(w['reteica:9660']).toBe(96600 + 966); // 0.966 % of 9,999,999 = 96,599.99 → 96,600; of 100,000 = 966
    expect(inv.withholding_total).toBe(404000 + 125001 + 285000 + 97566);
    expect(inv.amount_due).toBe(inv.total - inv.withholding_total);
    expect(inv).toMatchObject({ status: 'draft', number: null, balance: inv.amount_due });
    // Per-mil ReteICA rates are integers in parts per million (a float multipleOf refused 4.14 bps).
    for (const [ppm, amount] of [[4140, 41400], [414, 4140], [29, 290], [7, 70]]) {
      const d = await draft(sg, owner, { withholdings: [{ type: 'reteica', rate_ppm: ppm }], lines: [{ description: 'x', quantity: 1, unit_price: 10_000_000, tax_rate_ppm: 0 }] });
      expect(d.withholdings).toEqual([{ type: 'reteica', rate_ppm: ppm, base: 10_000_000, amount }]);
    }
    // Amounts past ±10^15 are refused naming the line, not stored as 1e+24.
    expect(await sg.call('invoices.create', { customer_id: await andina(owner), currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 1 }, { description: 'y', quantity: 1e9, unit_price: 1e15 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/1' });
    expect(await sg.call('invoices.create', { customer_id: await andina(owner), currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 6e14, tax_rate_ppm: 0 }, { description: 'y', quantity: 1, unit_price: 6e14, tax_rate_ppm: 0 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/1' });
    expect(await sg.call('invoices.create', { customer_id: await andina(owner), currency: 'COP', lines: [{ description: 'x', quantity: 0.1234567, unit_price: 1 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/quantity' });
  });

  it('refuses a due date before the issue date, a foreign item and a line without price', async () => {
    const owner = testPrincipal();
    expect(await sg.call('invoices.create', { customer_id: 'pty_x', currency: 'COP', issue_date: '2026-11-10', due_date: '2026-11-01', lines: [{ description: 'x', quantity: 1, unit_price: 1 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/due_date' });
    expect(await sg.call('invoices.create', { customer_id: 'pty_x', currency: 'COP', lines: [{ description: 'x', quantity: 1 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/unit_price' });
    expect(await sg.call('invoices.create', { customer_id: 'pty_x', currency: 'COP', lines: [{ item_id: 'itm_nope', quantity: 1 }] }, owner))
      .toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('invoices.create', { customer_id: 'pty_x', currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 1, tax_rate_ppm: 160000 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/tax_rate_ppm' });
    expect(await sg.call('invoices.create', { customer_id: 'pty_x', currency: 'COP', withholdings: [{ type: 'retecree', rate_ppm: 100 }], lines: [{ description: 'x', quantity: 1, unit_price: 1 }] }, owner))
      .toMatchObject({ ok: false, code: 'invalid_input', field: '/withholdings/0/type' });
  });
});

describe('invoices.update', () => {
  it('changes a draft and recomputes, refuses a posted invoice with conflict', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    const r = await sg.call('invoices.update', { id: inv.id, lines: [{ description: 'Otra', quantity: 1, unit_price: 1000, tax_rate_ppm: 50000 }] }, owner);
    expect(r.output.invoice).toMatchObject({ subtotal: 1000, tax_total: 50, total: 1050, balance: 1050 });
    expect(await sg.call('invoices.update', { id: inv.id }, owner)).toMatchObject({ code: 'invalid_input', field: '' });
    expect(await sg.call('invoices.update', { id: 'inv_nope', notes: 'x' }, owner)).toMatchObject({ code: 'not_found' });
    expect(await sg.call('invoices.update', { id: inv.id, due_date: '2026-01-01' }, owner)).toMatchObject({ code: 'invalid_input', field: '/due_date' });
    expect((await sg.call('invoices.post', { id: inv.id }, owner)).ok).toBe(true);
    expect(await sg.call('invoices.update', { id: inv.id, notes: 'changed' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
  });
});

describe('invoices.post', () => {
  it('numbers consecutively, computes the CUFE of DOMAIN.md and writes a balanced entry', async () => {
    const owner = await configuredWorkspace(sg);
    const a = await draft(sg, owner, { withholdings: [{ type: 'retefuente', rate_ppm: 40000 }] });
    const b = await draft(sg, owner);
    const pa = (await sg.call('invoices.post', { id: a.id }, owner)).output.invoice;
    const pb = (await sg.call('invoices.post', { id: b.id }, owner)).output.invoice;
    expect([pa.number, pb.number]).toEqual(['SETP990000000', 'SETP990000001']);
    expect(pa.issue_time).toMatch(/^\d{2}:\d{2}:\d{2}-05:00$/);
    const expected = cufe({
      number: pa.number, issueDate: '2026-11-02', issueTime: pa.issue_time, subtotal: 30000000, vat: 5700000, inc: 0, ica: 0, total: 35700000,
      issuerNit: '900373115', buyerId: BUYER.tax_id.number, key: TECH_KEY, environment: '2',
    });
    expect(pa.cufe).toBe(expected);
    expect(pa.cufe).toMatch(/^[0-9a-f]{96}$/);
    const got = await sg.call('invoices.get', { id: a.id }, owner);
    const entry = got.output.journal_entry;
    expect(entry.total_debit).toBe(entry.total_credit);
    expect(entry.lines).toEqual([
      { account: '130505', name: expect.any(String), debit: 35700000 - 1200000, credit: 0, party_id: await andina(owner) },
      // A line without item is a service to the buyer: its retención en la fuente is carried under 135515's servicios auxiliary.
      { account: '13551525', name: expect.any(String), debit: 1200000, credit: 0, party_id: null },
      { account: '413595', name: expect.any(String), debit: 0, credit: 30000000, party_id: null },
      { account: '240805', name: expect.any(String), debit: 0, credit: 5700000, party_id: null },
    ]);
  });

  it('posts exactly once under concurrent calls: one number, one entry, the rest conflict', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    const results = await Promise.all(Array.from({ length: 6 }, () => sg.call('invoices.post', { id: inv.id }, owner)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).every((r) => r.code === 'conflict')).toBe(true);
    const again = await sg.call('invoices.post', { id: inv.id }, owner);
    expect(again).toMatchObject({ ok: false, code: 'conflict' });
    const next = await draft(sg, owner);
    expect((await sg.call('invoices.post', { id: next.id }, owner)).output.invoice.number).toBe('SETP990000001');
    expect(await sg.db.collection('journal_entries').countDocuments({ 'source.id': inv.id })).toBe(1);
  });

  it('refuses without e-invoicing set up, for unknown ids, and when the range is used up', async () => {
    const bare = testPrincipal();
    const d = await sg.call('invoices.create', { customer_id: await andina(bare), currency: 'COP', lines: [{ description: 'x', quantity: 1, unit_price: 1 }] }, bare);
    expect(await sg.call('invoices.post', { id: d.output.invoice.id }, bare)).toMatchObject({ ok: false, code: 'conflict' });
    const owner = await configuredWorkspace(sg, { numbering: { invoice: { prefix: 'T', from: 1, to: 1 } } });
    expect(await sg.call('invoices.post', { id: 'inv_nope' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const one = await draft(sg, owner);
    const two = await draft(sg, owner);
    expect((await sg.call('invoices.post', { id: one.id }, owner)).output.invoice.number).toBe('T1');
    expect(await sg.call('invoices.post', { id: two.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    // The refused post ended undone (a post runs as a durable operation that the sweep would finish):
    // the draft holds no claim, no marker of the operation is left for the sweep to find, no entry was written.
    const left = await sg.db.collection('invoices').findOne({ _id: two.id } as never);
    expect(left).toMatchObject({ status: 'draft', number: null, journal_entry_id: null });
    expect(left?.posting ?? null).toBeNull();
    expect(await sg.db.collection('operations').countDocuments({ record: two.id })).toBe(0);
    expect(await sg.db.collection('journal_entries').countDocuments({ 'source.id': two.id })).toBe(0);
  });

  it('is refused to a viewer and to a read-only key', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    expect(await sg.call('invoices.post', { id: inv.id }, { ...owner, role: 'viewer' })).toMatchObject({ code: 'policy_denied' });
    expect(await sg.call('invoices.post', { id: inv.id }, { ...owner, scopes: ['tools:read'] })).toMatchObject({ code: 'insufficient_scope' });
  });
});

describe('invoices.credit_note', () => {
  it('credits part, then the rest, cancelling the invoice; never more than invoiced', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner, { lines: [{ description: 'A', quantity: 10, unit_price: 10000, tax_rate_ppm: 190000 }, { description: 'B', quantity: 1, unit_price: 50000, tax_rate_ppm: 0 }] });
    expect(await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 1, reason: 'devolución' }, owner)).toMatchObject({ ok: false, code: 'conflict' }); // draft
    await sg.call('invoices.post', { id: inv.id }, owner);
    const partial = await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 1, reason: 'devolución de 4', lines: [{ line: 0, quantity: 4 }] }, owner);
    expect(partial.ok).toBe(true);
    const note = partial.output.credit_note;
    expect(note).toMatchObject({ kind: 'credit_note', status: 'posted', number: 'NC1', subtotal: 40000, tax_total: 7600, total: 47600, credit_of: inv.id, concept: 1 });
    expect(note.cude).toBe(cufe({
      number: 'NC1', issueDate: note.issue_date, issueTime: note.issue_time, subtotal: 40000, vat: 7600, inc: 0, ica: 0, total: 47600,
      issuerNit: '900373115', buyerId: '800197268', key: PIN, environment: '2',
    }));
    expect(partial.output.invoice).toMatchObject({ status: 'posted', balance: 119000 + 50000 - 47600, credited: 47600 });
    expect(await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 1, reason: 'x', lines: [{ line: 0, quantity: 7 }] }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 2, reason: 'x', lines: [{ line: 0, quantity: 1 }] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/concept' });
    expect(await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 1, reason: 'x', lines: [{ line: 5, quantity: 1 }] }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/lines/0/line' });
    const rest = await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 2, reason: 'anulación' }, owner);
    expect(rest.output.invoice).toMatchObject({ status: 'cancelled', balance: 0 });
    expect(rest.output.credit_note.number).toBe('NC2');
    expect(await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 5, reason: 'x' }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('invoices.credit_note', { invoice_id: 'inv_nope', concept: 5, reason: 'x' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    const entry = (await sg.call('invoices.get', { id: note.id }, owner)).output.journal_entry;
    expect(entry.total_debit).toBe(entry.total_credit);
    expect(entry.lines.map((l: any) => l.account)).toEqual(['417505', '240805', '130505']);
  });

  it('is classed destructive and refused to a member role', async () => {
    const owner = await configuredWorkspace(sg);
    expect(await sg.call('invoices.credit_note', { invoice_id: 'inv_x', concept: 5, reason: 'x' }, { ...owner, role: 'member' })).toMatchObject({ code: 'policy_denied' });
  });
});

describe('invoices.send', () => {
  it('submits the UBL to the built-in sandbox, which accepts it once; a second send is a conflict', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner, { withholdings: [{ type: 'reteica', rate_ppm: 9660 }], notes: 'Pedido <urgente> & "especial"' });
    expect(await sg.call('invoices.send', { id: inv.id }, owner)).toMatchObject({ ok: false, code: 'conflict' }); // draft
    await sg.call('invoices.post', { id: inv.id }, owner);
    const sent = await sg.call('invoices.send', { id: inv.id }, owner);
    expect(sent.ok).toBe(true);
    expect(sent.output.authority).toMatchObject({ is_valid: true, status_code: '00', errors: [] });
    expect(sent.output.authority.track_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.output.invoice.authority).toMatchObject({ status: 'accepted' });
    expect(sent.output.authority.document_key).toBe(sent.output.invoice.cufe);
    expect(await sg.call('invoices.send', { id: inv.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    const ubl = await sg.call('invoices.render', { id: inv.id, format: 'ubl' }, owner);
    expect(ubl.output.content).toContain('Pedido &lt;urgente&gt; &amp; &quot;especial&quot;');
    const html = await sg.call('invoices.render', { id: inv.id }, owner);
    expect(html.output.content).toContain(inv.customer.name);
    expect(html.output.content).not.toContain('<urgente>');
  });

  it('is rejected with reasons when the keys do not match what the authority registered', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    await sg.call('invoices.post', { id: inv.id }, owner);
    // The range's technical key is changed after posting: the CUFE no longer matches the authority's.
    await sg.db.collection('einvoicing_settings').updateOne({ _id: owner.workspace } as never, { $set: sealSettingsSecrets(owner.workspace, { technical_key: 'ffffffffffffffffffffffff', software_pin: PIN }, sealerFromEnv()!) });
    const sent = await sg.call('invoices.send', { id: inv.id }, owner);
    expect(sent.output.authority.is_valid).toBe(false);
    expect(sent.output.authority.errors.join(' ')).toMatch(/CUFE/);
    expect(sent.output.invoice.authority.status).toBe('rejected');
  });
});

describe('invoices.list and get', () => {
  it('filters and searches; never shows another workspace', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner, { customer_id: await party(owner, { name: 'Ferretería Búho', kind: 'customer' }) });
    await sg.call('invoices.post', { id: inv.id }, owner);
    expect((await sg.call('invoices.list', { search: 'BÚHO' }, owner)).output.rows.length).toBe(1);
    expect((await sg.call('invoices.list', { search: 'SETP990000000' }, owner)).output.rows.length).toBe(1);
    expect((await sg.call('invoices.list', { status: 'draft' }, owner)).output.rows.length).toBe(0);
    expect(await sg.call('invoices.get', { id: inv.id }, testPrincipal())).toMatchObject({ ok: false, code: 'not_found' });
  });
});

describe('invoices.list overdue', () => {
  it('lists the posted invoices still owed whose due date is before today (the workspace\'s), not drafts, paid or future ones', async () => {
    const owner = await configuredWorkspace(sg);
    const today = localDate(new Date());
    const days = (n: number) => addDays(today, n);
    const late = await draft(sg, owner, { issue_date: days(-40), due_date: days(-10) });
    const dueToday = await draft(sg, owner, { issue_date: days(-5), due_date: today });
    const future = await draft(sg, owner, { issue_date: days(-5), due_date: days(20) });
    const draftLate = await draft(sg, owner, { issue_date: days(-40), due_date: days(-9) });
    for (const inv of [late, dueToday, future]) expect((await sg.call('invoices.post', { id: inv.id }, owner)).ok).toBe(true);
    const ids = async (input: Record<string, unknown>) => (await sg.call('invoices.list', input, owner)).output.rows.map((r: { id: string }) => r.id).sort();
    expect(await ids({ overdue: true })).toEqual([late.id]);
    expect(await ids({ overdue: false })).toEqual([late.id, dueToday.id, future.id, draftLate.id].filter((id) => id !== late.id).sort());
    expect(await sg.call('invoices.list', { overdue: 'yes' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/overdue' });
  });
});

describe('the buyer comes from crm, through the graph', () => {
  const line = [{ description: 'x', quantity: 1, unit_price: 1000 }];
  it('refuses a party that does not exist here or is no customer, and takes name and tax id from crm, not from the caller', async () => {
    const owner = await configuredWorkspace(sg);
    expect(await sg.call('invoices.create', { customer_id: 'pty_nope', currency: 'COP', lines: line }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/customer_id' });
    const foreign = await andina(testPrincipal());
    expect(await sg.call('invoices.create', { customer_id: foreign, currency: 'COP', lines: line }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/customer_id' });
    const vendor = await party(owner, { name: 'Proveedor SAS', kind: 'vendor' });
    expect(await sg.call('invoices.create', { customer_id: vendor, currency: 'COP', lines: line }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/customer_id' });
    expect(await sg.call('invoices.create', { customer_id: await andina(owner), customer: { name: 'Otro' }, currency: 'COP', lines: line }, owner)).toMatchObject({ ok: false, code: 'invalid_input' });
    const inv = await draft(sg, owner);
    expect(inv.customer).toMatchObject({ name: BUYER.name, tax_id: { type: 'NIT', number: '800197268', check_digit: 4 } });
    expect(await sg.db.collection('invoices').countDocuments({ workspace: owner.workspace })).toBe(1);
  });

  it('takes service assertions for reads only, and only the deployment\'s', async () => {
    const owner = await configuredWorkspace(sg);
    const post = (token: string, query: string) => fetch(`${crmPeer().url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', [ASSERTION_HEADER]: token }, body: JSON.stringify({ query }),
    });
    const mine = signServiceAssertion('invoices', owner.workspace, testServiceKeys().privateKey);
    const read = await (await post(mine, `{ party(id: "${await andina(owner)}") { name } }`)).json() as any;
    expect(read.data.party).toEqual({ name: BUYER.name });
    // The tool mutation refuses a service: tools go through the gateway's pipeline.
    const tool = await (await post(mine, 'mutation { invokeCrmTool(tool: "parties.create", input: {name: "X", kind: "customer"}) }')).json() as any;
    expect(tool.errors?.[0]?.extensions?.code).toBe('policy_denied');
    // An assertion signed by any other key is not the deployment's.
    const forged = signServiceAssertion('invoices', owner.workspace, generateSigningKeyPair().privateKey);
    expect((await post(forged, '{ parties { id } }')).status).toBe(401);
    // The same at POST /invoke, the tool mutation without GraphQL that the gateway uses.
    const invoke = (headers: Record<string, string>) => fetch(`${crmPeer().url}/invoke`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ tool: 'parties.create', input: { name: 'X', kind: 'customer' } }),
    });
    // /invoke answers as REST does (one refusal shape across the hop): status and {error, code}.
    const refused = await invoke({ [ASSERTION_HEADER]: mine });
    expect({ status: refused.status, code: ((await refused.json()) as any).code }).toEqual({ status: 403, code: 'policy_denied' });
    expect((await invoke({ [ASSERTION_HEADER]: forged })).status).toBe(401);
    expect((await invoke({})).status).toBe(401);
    expect(await crmPeer().db.collection('parties').countDocuments({ workspace: owner.workspace, name: 'X' })).toBe(0);
  });

  it('answers unavailable, having done nothing, when crm does not answer', async () => {
    const lonely = await startTestSubgraph(name, createServer, { peers: { crm: { url: 'http://127.0.0.1:9' } } });
    try {
      const owner = testPrincipal();
      expect(await lonely.call('invoices.create', { customer_id: 'pty_any', currency: 'COP', lines: line }, owner)).toMatchObject({ ok: false, code: 'unavailable' });
      expect(await lonely.db.collection('invoices').countDocuments({})).toBe(0);
    } finally {
      await lonely.close();
    }
  });
});
