import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { startInvoices } from './setup.ts';
import { createAccount } from '../src/modules/bank/tools/create_account.ts';
import { getAccount } from '../src/modules/bank/tools/get_account.ts';
import { listAccounts } from '../src/modules/bank/tools/list_accounts.ts';

let sg: TestSubgraph;
beforeAll(async () => {
  sg = await startInvoices();
});
afterAll(async () => {
  await sg?.close();
});

const records = async (owner: ReturnType<typeof testPrincipal>, query: Record<string, unknown>) => {
  const r = await sg.graphql('query($q: JSON!) { invoicesRecords(query: $q) }', { q: query }, owner);
  if (r.body.errors?.length) throw Object.assign(new Error(r.body.errors[0].message), { code: r.body.errors[0].extensions?.code, field: r.body.errors[0].extensions?.field });
  return r.body.data.invoicesRecords;
};

describe('bank accounts: create, get, list, the banks source', () => {
  it('stores the account, masks the number to its last 4 in every view, and seals it to the workspace', async () => {
    const owner = testPrincipal();
    const r = await sg.call('bank.create_account', {
      name: 'Cuenta corriente principal', bank_name: 'Bancolombia', account_number: '123-456789-01', currency: 'COP', opening_balance: 1_500_000_00, opening_date: '2026-11-01',
    }, owner);
    expect(r.ok).toBe(true);
    checkOutput('bank.create_account', createAccount.output, r.output);
    // Number "12345678901": letters and digits only; the last 4 are "8901".
    expect(r.output.account).toMatchObject({ account_number: '••••8901', currency: 'COP', puc_account: '111005', opening_balance: 150000000, opening_date: '2026-11-01' });
    expect(JSON.stringify(r.output)).not.toContain('1234567');
    const id = r.output.account.id;
    const got = await sg.call('bank.get_account', { id }, owner);
    checkOutput('bank.get_account', getAccount.output, got.output);
    expect(got.output.account).toEqual(r.output.account);
    await sg.call('bank.create_account', { name: 'Cuenta USD', bank_name: 'Davivienda', account_number: 'US00 1111 2222', currency: 'USD', puc_account: '111010' }, owner);
    const list = await sg.call('bank.list_accounts', {}, owner);
    checkOutput('bank.list_accounts', listAccounts.output, list.output);
    expect(list.output.rows.map((a: any) => [a.name, a.account_number])).toEqual([['Cuenta USD', '••••2222'], ['Cuenta corriente principal', '••••8901']]);
    expect(list.output.total).toBe(2);
    expect((await sg.call('bank.list_accounts', { search: 'davi' }, owner)).output.rows.map((a: any) => a.name)).toEqual(['Cuenta USD']);
    const src = await records(owner, { source: 'banks' });
    expect(src.rows.map((a: any) => a.account_number)).toEqual(['••••2222', '••••8901']);
    expect(src.total).toBe(2);

    // Another workspace sees none of it.
    const stranger = testPrincipal();
    expect(await sg.call('bank.get_account', { id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
    expect((await sg.call('bank.list_accounts', {}, stranger)).output.rows).toEqual([]);
    expect((await records(stranger, { source: 'banks' })).rows).toEqual([]);
  });

  it('refuses bad input at its field, and a number registered twice', async () => {
    const owner = testPrincipal();
    const base = { name: 'Ahorros', bank_name: 'BBVA', account_number: '0013-0456-7890', currency: 'COP' };
    const create = (over: Record<string, unknown>) => sg.call('bank.create_account', { ...base, ...over }, owner);
    expect(await create({ currency: 'cop' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/currency' });
    expect(await create({ puc_account: '110505' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/puc_account' });
    expect(await create({ account_number: '12' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/account_number' });
    expect(await create({ opening_balance: 1.5 })).toMatchObject({ ok: false, code: 'invalid_input', field: '/opening_balance' });
    expect(await create({ name: '' })).toMatchObject({ ok: false, code: 'invalid_input', field: '/name' });
    expect(await create({})).toMatchObject({ ok: true });
    // The same number written differently is the same account.
    expect(await create({ account_number: '001304567890' })).toMatchObject({ ok: false, code: 'conflict' });
    await expect(records(owner, { source: 'banks', kind: 'savings' })).rejects.toMatchObject({ code: 'invalid_input', field: '/kind' });
  });
});
