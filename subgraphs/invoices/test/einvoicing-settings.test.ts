import { testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settings } from '../src/lib/settings.ts';
import { PIN, TECH_KEY, startInvoices } from './setup.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

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
    expect(stored).toMatchObject({ technical_key: TECH_KEY, software_pin: PIN, issuer: { name: 'Cuadra Demo S.A.S.' } });
    // Given again: replaced.
    expect((await sg.call('einvoicing.configure', { ...base, technical_key: 'abcdef0123456789', software_pin: '999' }, owner)).ok).toBe(true);
    stored = await settings(sg.db).findById(owner.workspace).lean();
    expect(stored).toMatchObject({ technical_key: 'abcdef0123456789', software_pin: '999' });
  });

  it('is sealed: another workspace reads its own (nothing)', async () => {
    const other = testPrincipal();
    const read = await sg.call('einvoicing.settings', {}, other);
    expect(read.ok && read.output.settings).toBeNull();
  });
});
