import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// Issue 30, item 7, through the whole system: the gateway reads the workspace's country from the
// workspace record and states it to the invoices service in its assertion; the country decides the
// tax regime. Nothing in the calls says which country they are from.
let sys: TestSystem;
beforeAll(async () => {
  sys = await startTestSystem('taxregime');
});
afterAll(async () => {
  await sys?.stop();
});

describe('a workspace\'s country decides its tax regime', () => {
  it('a Dutch workspace invoices at 21 % and posts without DIAN; a Colombian one is refused 21 %', async () => {
    const dutch = await sys.identity.createWorkspace({ name: 'Jansen Advies B.V.', ownerEmail: 'eigenaar@jansen.example', country: 'NL' });
    const colombian = await sys.identity.createWorkspace({ name: 'Andes SAS', ownerEmail: 'dueno@andes.example' });
    const buyer = async (key: string) => (await sys.invoke('parties.create', { name: 'Klant B.V.', kind: 'customer' }, key)).body.output.party.id;
    const line = { description: 'Advies', quantity: 2, unit_price: 9500, tax_rate_ppm: 210000 };

    const made = await sys.invoke('invoices.create', { customer_id: await buyer(dutch.api_key), currency: 'EUR', lines: [line] }, dutch.api_key);
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    // 2 × 95.00 = 190.00; VAT 21 % = 39.90; 229.90.
    expect(made.body.output.invoice).toMatchObject({ subtotal: 19000, tax_total: 3990, total: 22990 });
    const posted = await sys.invoke('invoices.post', { id: made.body.output.invoice.id }, dutch.api_key);
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    expect(posted.body.output.invoice).toMatchObject({ status: 'posted', number: 'INV1', cufe: null });
    expect((await sys.invoke('invoices.send', { id: made.body.output.invoice.id }, dutch.api_key)).status).toBe(409);

    const refused = await sys.invoke('invoices.create', { customer_id: await buyer(colombian.api_key), currency: 'COP', lines: [line] }, colombian.api_key);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'invalid_input', field: '/lines/0/tax_rate_ppm' });
  });
});
