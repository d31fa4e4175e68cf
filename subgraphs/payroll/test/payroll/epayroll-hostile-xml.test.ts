// Issue 31, finding 5: the payroll sandbox reads XML through the product's one hardened reader
// (shared/src/xml.ts): a DOCTYPE is refused before the document is read, so no entity is expanded.
import { describe, expect, it } from 'vitest';
import { validateNomina } from '../../src/modules/payroll/epayroll_sandbox.ts';

describe('the electronic payroll sandbox and hostile XML', () => {
  it('refuses a document with a DOCTYPE (an entity swapped into a value) before reading it', async () => {
    let looked = 0;
    const xml = '<?xml version="1.0"?><!DOCTYPE NominaIndividual [<!ENTITY nit "900373115">]><NominaIndividual xmlns="dian:gov:co:facturaelectronica:NominaIndividual"><Empleador NIT="&nit;"/></NominaIndividual>';
    const r = await validateNomina(xml, async () => { looked++; return null; });
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toContain('DOCTYPE');
    expect(r).toMatchObject({ key: null, number: null });
    expect(looked).toBe(0);
  });
});
