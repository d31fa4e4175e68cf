import { connectDatabase } from '@cuadra/shared';
import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import type { Connection } from 'mongoose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cufe } from '../src/e-documents/cufe.ts';
import { openSettings, sealPlainSettings, settings } from '../src/lib/settings.ts';
import { BUYER, PIN, TECH_KEY, configuredWorkspace, draft, startInvoices } from './setup.ts';

let sg: TestSubgraph;
/** A client of its own on the service's database: what is at rest, as anyone reading the database sees it. */
let raw: Connection;
beforeAll(async () => {
  sg = await startInvoices();
  raw = await connectDatabase(process.env.MONGO_URL!, sg.db.name);
});
afterAll(async () => {
  await raw?.close();
  await sg?.close();
});

const rawSettings = (workspace: string) => raw.collection('einvoicing_settings').findOne({ _id: workspace as never });

const base = {
  issuer: { nit: '900373115-3', name: 'Cuadra Demo SAS' },
  numbering: { invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001' } },
};

describe('einvoicing.settings and the write-only secrets of einvoicing.configure', () => {
  it('reads null before the set-up; the first set-up needs both secrets (field named)', async () => {
    const owner = testPrincipal();
    const empty = await sg.call('einvoicing.settings', {}, owner);
    expect(empty.ok && empty.output).toEqual({ settings: null, secrets: { technical_key: false, software_pin: false }, certificate: null });
    const noKey = await sg.call('einvoicing.configure', { ...base, software_pin: PIN }, owner);
    expect(noKey).toMatchObject({ ok: false, code: 'invalid_input', field: '/technical_key' });
    const noPin = await sg.call('einvoicing.configure', { ...base, technical_key: TECH_KEY }, owner);
    expect(noPin).toMatchObject({ ok: false, code: 'invalid_input', field: '/software_pin' });
    expect(await settings(sg.db).findById(owner.workspace).lean()).toBeNull();
  });

  it('shows the settings and whether the secrets are set, never their values; left out, they are kept; given, replaced', async () => {
    const owner = testPrincipal();
    expect((await sg.call('einvoicing.configure', { ...base, technical_key: TECH_KEY, software_pin: PIN }, owner)).ok).toBe(true);
    const read = await sg.call('einvoicing.settings', {}, owner);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.output).toMatchObject({
      secrets: { technical_key: true, software_pin: true }, certificate: null,
      // NIT 900373115 with check digit 3; a credit-note range by default (NC 1–999.999.999).
      settings: { _id: owner.workspace, issuer: { nit: '900373115', check_digit: 3, name: 'Cuadra Demo SAS' }, environment: '2', currency: 'COP', numbering: { invoice: { prefix: 'SETP', from: 990000000, to: 995000000, resolution: '18760000001', valid_to: null }, credit_note: { prefix: 'NC', from: 1, to: 999999999 } } },
    });
    const text = JSON.stringify(read.output);
    expect(text).not.toContain(TECH_KEY);
    expect(text).not.toContain(`"${PIN}"`);
    // Changed without the secrets: the stored ones stay.
    expect((await sg.call('einvoicing.configure', { ...base, issuer: { nit: '900373115-3', name: 'Cuadra Demo S.A.S.' } }, owner)).ok).toBe(true);
    let stored = await settings(sg.db).findById(owner.workspace).lean();
    expect(openSettings(stored!)).toMatchObject({ technical_key: TECH_KEY, software_pin: PIN, issuer: { name: 'Cuadra Demo S.A.S.' } });
    // Given again: replaced.
    expect((await sg.call('einvoicing.configure', { ...base, technical_key: 'abcdef0123456789', software_pin: '999' }, owner)).ok).toBe(true);
    stored = await settings(sg.db).findById(owner.workspace).lean();
    expect(openSettings(stored!)).toMatchObject({ technical_key: 'abcdef0123456789', software_pin: '999' });
  });

  it('keeps the technical key and the PIN only sealed: the document at rest holds neither', async () => {
    const owner = testPrincipal();
    const pin = 'Pin4711';
    expect((await sg.call('einvoicing.configure', { ...base, technical_key: TECH_KEY, software_pin: pin }, owner)).ok).toBe(true);
    const doc = await rawSettings(owner.workspace);
    expect(doc).toMatchObject({ technical_key_sealed: expect.stringMatching(/^v1\./), software_pin_sealed: expect.stringMatching(/^v1\./) });
    expect(doc).not.toHaveProperty('technical_key');
    expect(doc).not.toHaveProperty('software_pin');
    const text = JSON.stringify(doc);
    expect(text).not.toContain(TECH_KEY);
    expect(text).not.toContain(pin);
    // A box copied to another workspace does not open there.
    expect(() => openSettings({ ...(doc as object), _id: 'ws_other' } as never)).toThrow(/cannot be opened/);
  });

  it('reads a set-up stored in plain text before sealing (same CUFE and CUDE), and seals it at start-up', async () => {
    const owner = await configuredWorkspace(sg);
    // As written before sealing: the plain values, no boxes.
    await raw.collection('einvoicing_settings').updateOne({ _id: owner.workspace as never }, { $set: { technical_key: TECH_KEY, software_pin: PIN }, $unset: { technical_key_sealed: '', software_pin_sealed: '' } });
    const secrets = await sg.call('einvoicing.settings', {}, owner);
    expect(secrets.ok && secrets.output.secrets).toEqual({ technical_key: true, software_pin: true });
    expect(JSON.stringify(secrets.ok && secrets.output)).not.toContain(TECH_KEY);
    const expectCufe = async (key: string) => {
      const inv = (await sg.call('invoices.post', { id: (await draft(sg, owner)).id }, owner)).output.invoice;
      expect(inv.cufe).toBe(cufe({
        number: inv.number, issueDate: '2026-11-02', issueTime: inv.issue_time, subtotal: 30000000, vat: 5700000, inc: 0, ica: 0, total: 35700000,
        issuerNit: '900373115', buyerId: BUYER.tax_id.number, key, environment: '2',
      }));
      const note = (await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 2, reason: 'anulación' }, owner)).output.credit_note;
      expect(note.cude).toBe(cufe({
        number: note.number, issueDate: note.issue_date, issueTime: note.issue_time, subtotal: 30000000, vat: 5700000, inc: 0, ica: 0, total: 35700000,
        issuerNit: '900373115', buyerId: BUYER.tax_id.number, key: PIN, environment: '2',
      }));
    };
    await expectCufe(TECH_KEY);
    // The start-up step seals it (one conditional update); a second run finds nothing plain.
    expect(await sealPlainSettings(sg.db)).toBeGreaterThanOrEqual(1);
    const doc = await rawSettings(owner.workspace);
    expect(doc).not.toHaveProperty('technical_key');
    expect(doc).not.toHaveProperty('software_pin');
    expect(JSON.stringify(doc)).not.toContain(TECH_KEY);
    expect(await sealPlainSettings(sg.db)).toBe(0);
    // The sealed values are the same: the next documents get the same codes.
    await expectCufe(TECH_KEY);
    const read = await sg.call('einvoicing.settings', {}, owner);
    expect(read.ok && read.output.secrets).toEqual({ technical_key: true, software_pin: true });
    expect(Object.keys(read.ok ? read.output.settings! : {})).not.toContain('technical_key_sealed');
  });

  it('is sealed: another workspace reads its own (nothing)', async () => {
    const other = testPrincipal();
    const read = await sg.call('einvoicing.settings', {}, other);
    expect(read.ok && read.output.settings).toBeNull();
  });
});

describe('the issuer\'s profile in einvoicing.configure (Anexo Técnico 1.9, AccountingSupplierParty)', () => {
  it('is kept with the set-up, checked against DIAN\'s lists, and left out it stays as it was (a form with name and NIT alone erases nothing)', async () => {
    const owner = await configuredWorkspace(sg);
    const first = (await sg.call('einvoicing.settings', {}, owner)).output.settings;
    expect(first.issuer).toEqual({
      nit: '900373115', check_digit: 3, name: 'Cuadra Demo SAS', legal_name: 'CUADRA DEMO S.A.S.', person_type: 'legal', responsibilities: ['O-15'], tax_scheme: '01',
      address: { line: 'Calle 93 # 11-28 Oficina 502', municipality_code: '11001', postal_code: '110221', country: 'CO' }, email: 'facturacion@cuadra.example.co', phone: '6017434000',
    });
    expect(first).toMatchObject({ software_maker: { name: 'Cuadra Software SAS', nit: '901234567', check_digit: 7 }, software_name: 'Cuadra', payment_means: '47' });
    const again = await sg.call('einvoicing.configure', { ...base, issuer: { nit: '900373115-3', name: 'Cuadra Demo' } }, owner);
    expect(again.ok, again.message).toBe(true);
    expect(again.output.settings.issuer).toEqual({ ...first.issuer, name: 'Cuadra Demo' });
    expect(again.output.settings).toMatchObject({ software_maker: first.software_maker, payment_means: '47' });
    const refused = (input: Record<string, unknown>) => sg.call('einvoicing.configure', { ...base, ...input }, owner);
    expect(await refused({ issuer: { ...base.issuer, address: { line: 'x', municipality_code: '11002' } } })).toMatchObject({ ok: false, code: 'invalid_input', field: '/issuer/address/municipality_code' });
    expect(await refused({ issuer: { ...base.issuer, responsibilities: ['R-99-PN', 'O-13'] } })).toMatchObject({ ok: false, code: 'invalid_input', field: '/issuer/responsibilities' });
    expect(await refused({ software_maker: { name: 'X', nit: '901234567-1' } })).toMatchObject({ ok: false, code: 'invalid_input', field: '/software_maker/nit' });
    expect(await refused({ payment_means: '99' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/payment_means' });
  });
});
