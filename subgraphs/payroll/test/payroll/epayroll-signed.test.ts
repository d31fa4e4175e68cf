import { createHash, randomBytes } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpDatabase, startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { makeP12 as makeSignedP12, xmlsecVerify } from '@cuadra/shared/testing/signatures';
import { createServer, name } from '../../src/server.ts';
import { xmllint } from '../support.ts';
import { sandboxAnswer, type EpayrollIssuerLookup } from '../../src/modules/payroll/epayroll_sandbox.ts';

/**
 * The signed Nómina Individual (issue 18): XAdES-EPES with the employer's certificate (uploaded
 * to payroll with payroll.upload_certificate, its key sealed), checked by xmlsec1 (independent of
 * our code) and by the XSD with xmllint; the built-in sandbox refuses a tampered, missing or
 * foreign signature. The signing core is shared with e-invoicing (shared/src/xades.ts). Then the
 * adjustment notes (TipoXML 103): replace and delete, each validated against the annex's
 * NominaIndividualDeAjuste XSD, signed, with its CUNE recomputed here by hand.
 */

const XSD = fileURLToPath(new URL('../../src/modules/payroll/xsd/NominaIndividualElectronicaXSD.xsd', import.meta.url));
const AJUSTE_XSD = fileURLToPath(new URL('../../src/modules/payroll/xsd/NominaIndividualDeAjusteElectronicaXSD.xsd', import.meta.url));
const parse = (text: string, root: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseAttributeValue: false, parseTagValue: false }).parse(text)[root];

let payroll: TestSubgraph;
const sealKeyBefore = process.env.CUADRA_SEAL_KEY;
beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
  if (sealKeyBefore === undefined) delete process.env.CUADRA_SEAL_KEY;
  else process.env.CUADRA_SEAL_KEY = sealKeyBefore;
});

/** The employer's certificate as a CA would hand one out (shared with e-invoicing's signature tests). */
const makeP12 = (password: string, cn = 'Tienda Andina SAS') => makeSignedP12({ password, cn, org: cn });



const SETTINGS = {
  nit: '900373115', company_name: 'Tienda Andina SAS', department: '11', municipality: '11001', address: 'Calle 26 # 68-35',
  software_id: 'a1b2c3d4-sw', software_pin: '75315', prefix: 'NE',
};
const SIGNATURE = /<ext:UBLExtensions>[\s\S]*<\/ext:UBLExtensions>\s*/;

describe('the signed Nómina Individual', () => {
  const owner = testPrincipal();
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const p12 = makeP12(password);
  let ana: { id: string };
  let xml: string;
  const lookup = (certPem: string | null): EpayrollIssuerLookup => async (sw, nit) => (sw === SETTINGS.software_id && nit === SETTINGS.nit ? { ...SETTINGS, cert_pem: certPem } : null);

  beforeAll(async () => {
    const r = await payroll.call('employees.create', {
      name: 'Ana María Gómez Ruiz', document: { type: 'CC', number: String(1_030_000_000 + Math.floor(Math.random() * 1e8)) }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, owner);
    ana = r.output.employee;
    const month = await payroll.call('payroll.run', { month: '2026-04' }, owner);
    // One minimum wage: net 185_992_800 (payslips.test.ts works it out).
    expect((await payroll.call('payroll.approve', { id: month.output.run.id, amount: 185_992_800 }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id: month.output.run.id }, owner)).ok).toBe(true);
  });

  it('uploads the certificate sealed, refusing what does not fit', async () => {
    expect(await payroll.call('payroll.upload_certificate', { p12_base64: p12.base64, password }, owner)).toMatchObject({ code: 'conflict' });
    // The settings' PIN is sealed too (with this key, kept for the rest of the file).
    const sealKey = randomBytes(32).toString('base64');
    process.env.CUADRA_SEAL_KEY = sealKey;
    expect((await payroll.call('payroll.epayroll_configure', SETTINGS, owner)).ok).toBe(true);
    // Without a sealing key the key cannot be kept safely, so nothing is kept.
    delete process.env.CUADRA_SEAL_KEY;
    expect(await payroll.call('payroll.upload_certificate', { p12_base64: p12.base64, password }, owner)).toMatchObject({ code: 'unavailable' });
    expect(await payroll.call('payroll.epayroll_configure', SETTINGS, owner)).toMatchObject({ code: 'unavailable' });
    process.env.CUADRA_SEAL_KEY = sealKey;
    expect(await payroll.call('payroll.upload_certificate', { p12_base64: 'not base64!', password }, owner)).toMatchObject({ code: 'invalid_input', field: '/p12_base64' });
    expect(await payroll.call('payroll.upload_certificate', { p12_base64: p12.base64, password: 'wrong' }, owner)).toMatchObject({ code: 'invalid_input', field: '/password' });
    const r = await payroll.call('payroll.upload_certificate', { p12_base64: p12.base64, password }, owner);
    expect(r.output.certificate).toMatchObject({ subject: 'C=CO,O=Tienda Andina SAS,CN=Tienda Andina SAS', issuer: 'C=CO,O=Tienda Andina SAS,CN=Tienda Andina SAS' });
    expect(r.output.certificate.serial).toMatch(/^\d+$/);
    // Nothing secret is kept or answered: not the password, not the key, not the file.
    const stored = await dumpDatabase(payroll.db);
    const keyBody = p12.keyPem.split('\n')[1];
    for (const secret of [password, keyBody, p12.base64.slice(0, 40)]) {
      expect(stored).not.toContain(secret);
      expect(JSON.stringify(r.output)).not.toContain(secret);
    }
  });

  it('signs the document: xmlsec1 verifies it with the certificate, the XSD accepts it, the sandbox accepts it', async () => {
    const r = await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-04' }, owner);
    expect(r.output.document.authority, JSON.stringify(r.output.document.authority)).toMatchObject({ is_valid: true, errors: [] });
    xml = r.output.document.xml;
    expect(xml).toMatch(/^<\?xml[^>]*>\s*<NominaIndividual [^>]*xmlns:ds="http:\/\/www.w3.org\/2000\/09\/xmldsig#"[^>]*>\s*<ext:UBLExtensions>\s*<ext:UBLExtension>\s*<ext:ExtensionContent><ds:Signature /);
    expect(xml).toContain('<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>');
    expect(xml).toContain('<xades:Identifier>https://facturaelectronica.dian.gov.co/politicadefirma/v2/politicadefirmav2.pdf</xades:Identifier>');
    expect(xml).toContain('<xades:ClaimedRole>supplier</xades:ClaimedRole>');
    const verified = await xmlsecVerify(xml, p12.certPem);
    expect(verified.ok, verified.output).toBe(true);
    expect(verified.output).toContain('OK');
    const lint = xmllint(xml, XSD);
    expect(lint.ok, lint.out).toBe(true);
  });

  it('refuses a tampered, a missing and a foreign signature (xmlsec1 and the sandbox)', async () => {
    // One worker detail no total depends on: only the signature can tell.
    const tampered = xml.replace(/PrimerNombre="Ana"/, 'PrimerNombre="Ada"');
    expect(tampered).not.toBe(xml);
    expect((await xmlsecVerify(tampered, p12.certPem)).ok).toBe(false);
    expect((await sandboxAnswer(tampered, lookup(p12.certPem))).errors).toEqual([expect.stringMatching(/^ZE02: .*modificado/)]);
    // Unsigned, while the employer registered a certificate.
    const unsigned = xml.replace(SIGNATURE, '');
    expect(unsigned).not.toContain('ds:Signature');
    expect((await sandboxAnswer(unsigned, lookup(p12.certPem))).errors).toEqual([expect.stringMatching(/^FAA02: /)]);
    // Signed by another certificate than the registered one.
    const other = makeP12('x', 'Otra SAS');
    expect((await sandboxAnswer(xml, lookup(other.certPem))).errors).toEqual([expect.stringMatching(/^ZE02: .*KeyInfo no es el registrado/)]);
    expect((await xmlsecVerify(xml, other.certPem)).ok).toBe(false);
    // A signature from an employer with no certificate registered cannot be checked.
    expect((await sandboxAnswer(xml, lookup(null))).errors).toEqual([expect.stringMatching(/^ZE02: /)]);
    // The untouched document passes.
    expect((await sandboxAnswer(xml, lookup(p12.certPem))).errors).toEqual([]);
  });

  it('adjusts the accepted document: a replacing note after the month was posted again, then a deleting one (XSD, xmlsec1, CUNE by hand, sandbox)', async () => {
    const original = parse(xml, 'NominaIndividual');
    expect(await payroll.call('payroll.einvoice_adjust', { employee_id: ana.id, month: '2026-05', kind: 'replace' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.einvoice_adjust', { employee_id: ana.id, month: '2026-04', kind: 'undo' }, owner)).toMatchObject({ code: 'invalid_input', field: '/kind' });
    expect(await payroll.call('payroll.einvoice_adjust', { employee_id: ana.id, month: '2026-04', kind: 'delete' }, testPrincipal())).toMatchObject({ code: 'conflict' });
    // April is corrected: the posted run is voided (reversed), a commission of $100.000 added, April run and posted again.
    const runs = await payroll.graphql('query($q: JSON!) { payrollRecords(query: $q) }', { q: { source: 'payroll_runs', status: 'posted' } }, owner);
    const aprilId = runs.body.data.payrollRecords.rows[0].id;
    expect((await payroll.call('payroll.void', { id: aprilId, reason: 'Faltó la comisión' }, owner)).output.run.status).toBe('void');
    expect((await payroll.call('payroll.novelties.create', { employee_id: ana.id, type: 'commission', date: '2026-04-15', amount: 10_000_000 }, owner)).ok).toBe(true);
    const again = await payroll.call('payroll.run', { month: '2026-04' }, owner);
    // Earnings 175_090_500 + 24_909_500 + 10_000_000 = 210_000_000; IBC 185_090_500; health 4 % = 74.036,20 → half up 74.036,
    // pension the same; net 210_000_000 − 14_807_200 = 195_192_800.
    expect(again.output.run.totals.net).toBe(195_192_800);
    expect((await payroll.call('payroll.approve', { id: again.output.run.id, amount: 195_192_800 }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id: again.output.run.id }, owner)).ok).toBe(true);

    const replaced = await payroll.call('payroll.einvoice_adjust', { employee_id: ana.id, month: '2026-04', kind: 'replace', reason: 'Comisión de abril' }, owner);
    const note = replaced.output.note;
    expect(note.authority, JSON.stringify(note.authority)).toMatchObject({ is_valid: true, errors: [] });
    expect(note).toMatchObject({ kind: 'replace', number: 'NE2', status: 'accepted', predecessor: { number: 'NE1', cune: original.InformacionGeneral.CUNE, date: original.InformacionGeneral.FechaGen } });
    let lint = xmllint(note.xml, AJUSTE_XSD);
    expect(lint.ok, lint.out).toBe(true);
    expect((await xmlsecVerify(note.xml, p12.certPem)).ok).toBe(true);
    const r = parse(note.xml, 'NominaIndividualDeAjuste');
    expect(r.TipoNota).toBe('1');
    const body = r.Reemplazar;
    expect(body.ReemplazandoPredecesor).toEqual({ NumeroPred: 'NE1', CUNEPred: original.InformacionGeneral.CUNE, FechaGenPred: original.InformacionGeneral.FechaGen });
    // 2.100.000 devengados (1.750.905 + 249.095 + 100.000); 148.072 deducciones (74.036 × 2); 1.951.928 neto.
    expect(body.Devengados.Comisiones).toEqual({ Comision: '100000.00' });
    expect([body.DevengadosTotal, body.DeduccionesTotal, body.ComprobanteTotal]).toEqual(['2100000.00', '148072.00', '1951928.00']);
    // The CUNE again, by hand: NumNE + FecNE + HorNE + ValDev + ValDed + ValTolNE + NitNE + DocEmp + TipoXML 103 + PIN 75315 + Ambiente 2.
    const g = body.InformacionGeneral;
    expect(g.TipoXML).toBe('103');
    const byHand = `NE2${g.FechaGen}${g.HoraGen}2100000.00148072.001951928.00900373115${body.Trabajador.NumeroDocumento}103753152`;
    expect(createHash('sha384').update(byHand, 'utf8').digest('hex')).toBe(g.CUNE);
    expect(note.cune).toBe(g.CUNE);
    // Altered after signing: the sandbox refuses it.
    expect((await sandboxAnswer(note.xml.replace('Comision>100000.00', 'Comision>100000.00 '), lookup(p12.certPem))).errors).toEqual([expect.stringMatching(/^ZE02: /)]);

    // Deleting: it adjusts the replacement now in force.
    const deleted = (await payroll.call('payroll.einvoice_adjust', { employee_id: ana.id, month: '2026-04', kind: 'delete', reason: 'Documento emitido por error' }, owner)).output.note;
    expect(deleted).toMatchObject({ kind: 'delete', number: 'NE3', status: 'accepted', predecessor: { number: 'NE2', cune: note.cune } });
    lint = xmllint(deleted.xml, AJUSTE_XSD);
    expect(lint.ok, lint.out).toBe(true);
    expect((await xmlsecVerify(deleted.xml, p12.certPem)).ok).toBe(true);
    const d = parse(deleted.xml, 'NominaIndividualDeAjuste');
    expect(d.TipoNota).toBe('2');
    expect(d.Eliminar.EliminandoPredecesor).toMatchObject({ NumeroPred: 'NE2', CUNEPred: note.cune });
    expect(d.Eliminar.Trabajador).toBeUndefined();
    // A deletion hashes zero amounts and worker document 0.
    const dg = d.Eliminar.InformacionGeneral;
    expect(createHash('sha384').update(`NE3${dg.FechaGen}${dg.HoraGen}0.000.000.009003731150103753152`, 'utf8').digest('hex')).toBe(dg.CUNE);
    expect(await payroll.call('payroll.einvoice_adjust', { employee_id: ana.id, month: '2026-04', kind: 'replace' }, owner)).toMatchObject({ code: 'conflict' });
  });

  it('is sealed to the workspace: another one has no certificate and signs nothing', async () => {
    const other = testPrincipal();
    expect(await payroll.call('payroll.upload_certificate', { p12_base64: p12.base64, password }, other)).toMatchObject({ code: 'conflict' });
  });
});
