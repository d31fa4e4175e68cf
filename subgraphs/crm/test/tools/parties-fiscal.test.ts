import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { create } from '../../src/modules/parties/tools/create.ts';

let crm: TestSubgraph;
beforeAll(async () => {
  crm = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await crm?.close();
});

// What a Colombian e-invoice needs of a buyer (Anexo Técnico 1.9, AccountingCustomerParty): the
// party keeps it, checked against DIAN's code lists, and finance reads it through the graph.
describe('a party\'s fiscal profile', () => {
  const fiscal = {
    person_type: 'legal', legal_name: 'TIENDA ANDINA S.A.S.', responsibilities: ['O-13', 'O-23'], tax_scheme: '01',
    address: { line: 'Carrera 7 # 71-21 Torre B', municipality_code: '11001', postal_code: '110231' },
  };

  it('is kept with DIAN\'s names for the municipality and department, and read through the graph', async () => {
    const owner = testPrincipal();
    const r = await crm.call('parties.create', { name: 'Tienda Andina', kind: 'customer', tax_id: { type: 'NIT', number: '800197268-4' }, fiscal }, owner);
    expect(r.ok, r.message).toBe(true);
    checkOutput('parties.create', create.output, r.output);
    expect(r.output.party.fiscal).toEqual({
      person_type: 'legal', legal_name: 'TIENDA ANDINA S.A.S.', responsibilities: ['O-13', 'O-23'], tax_scheme: '01',
      address: { line: 'Carrera 7 # 71-21 Torre B', municipality_code: '11001', municipality: 'Bogotá, D.c.', department_code: '11', department: 'Bogotá', postal_code: '110231', country: 'CO' },
    });
    const g = await crm.graphql('query($id: ID!) { party(id: $id) { fiscal { personType legalName responsibilities taxScheme address { line municipalityCode municipality departmentCode department postalCode country } } } }', { id: r.output.party.id }, owner);
    expect(g.body.data.party.fiscal).toEqual({
      personType: 'legal', legalName: 'TIENDA ANDINA S.A.S.', responsibilities: ['O-13', 'O-23'], taxScheme: '01',
      address: { line: 'Carrera 7 # 71-21 Torre B', municipalityCode: '11001', municipality: 'Bogotá, D.c.', departmentCode: '11', department: 'Bogotá', postalCode: '110231', country: 'CO' },
    });
    // Medellín is 05001 in Antioquia (05); a person defaults to R-99-PN and no tax (ZZ).
    const person = await crm.call('parties.update', { id: r.output.party.id, fiscal: { person_type: 'natural', address: { line: 'Calle 10 # 43-12', municipality_code: '05001' } } }, owner);
    expect(person.output.party.fiscal).toMatchObject({ person_type: 'natural', legal_name: null, responsibilities: ['R-99-PN'], tax_scheme: 'ZZ', address: { municipality: 'Medellín', department_code: '05', department: 'Antioquia' } });
    // A party without one has none.
    expect((await crm.call('parties.create', { name: 'Sin perfil', kind: 'customer' }, owner)).output.party.fiscal).toBeNull();
  });

  it('refuses a municipality outside DIAN\'s list, a Colombian address without one, a code on a foreign address, R-99-PN with others, an unknown responsibility', async () => {
    const owner = testPrincipal();
    const base = { name: 'X', kind: 'customer' };
    const refused = async (f: Record<string, unknown>, field: string) => {
      expect(await crm.call('parties.create', { ...base, fiscal: f }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field });
    };
    await refused({ ...fiscal, address: { ...fiscal.address, municipality_code: '11002' } }, '/fiscal/address/municipality_code');
    await refused({ ...fiscal, address: { line: 'Cra 1' } }, '/fiscal/address/municipality_code');
    await refused({ ...fiscal, address: { line: 'Keizersgracht 1', municipality_code: '11001', country: 'NL' } }, '/fiscal/address/municipality_code');
    await refused({ ...fiscal, responsibilities: ['R-99-PN', 'O-13'] }, '/fiscal/responsibilities');
    await refused({ ...fiscal, responsibilities: ['O-99'] }, '/fiscal/responsibilities/0');
    await refused({ ...fiscal, person_type: 'company' }, '/fiscal/person_type');
    expect(await crm.db.collection('parties').countDocuments({ workspace: owner.workspace })).toBe(0);
    // A foreign address needs no code.
    const foreign = await crm.call('parties.create', { ...base, fiscal: { person_type: 'legal', address: { line: 'Keizersgracht 1', country: 'NL' } } }, owner);
    expect(foreign.output.party.fiscal.address).toMatchObject({ country: 'NL', municipality_code: null, department: null });
  });
});
