import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { createServer, name } from '../../src/server.ts';
import { xmllint } from '../support.ts';
import { nitCheckDigit } from '@cuadra/shared/dian';
import { sealPlainEpayrollSettings, splitName } from '../../src/modules/payroll/epayroll.ts';
import { sandboxAnswer } from '../../src/modules/payroll/epayroll_sandbox.ts';

/**
 * The electronic payroll support document (Nómina Individual, DIAN Resolución 000013 de 2021):
 * the XML validated with xmllint against the annex's XSD (v1.0.6, kept in the repository), the
 * CUNE recomputed here with node:crypto from a string written out by hand, and the built-in
 * sandbox's refusals.
 */

const XSD = fileURLToPath(new URL('../../src/modules/payroll/xsd/NominaIndividualElectronicaXSD.xsd', import.meta.url));

let payroll: TestSubgraph;
beforeAll(async () => {
  // The software PIN is stored only sealed: the service gets its sealing key from the environment, as in production.
  process.env.CUADRA_SEAL_KEY ??= randomBytes(32).toString('base64');
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

const SETTINGS = {
  nit: '900373115', company_name: 'Tienda Andina SAS', department: '11', municipality: '11001', address: 'Calle 26 # 68-35',
  software_id: 'a1b2c3d4-sw', software_pin: '75315', prefix: 'NE',
};

const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseAttributeValue: false, parseTagValue: false }).parse(xml).NominaIndividual;

describe('the vendored schema', () => {
  it('is the Caja de Herramientas v1.0.6 file (SHA-256 as recorded in xsd/README.md)', () => {
    const text = readFileSync(XSD);
    expect(text.toString('utf8')).toContain('<!--Version #1.0.6-->');
    expect(createHash('sha256').update(text).digest('hex')).toBe('8c161cad85cfa95fe7e7e1331b2a9243c5344ae01194ad311163ce7083551924');
  });
});

describe('helpers', () => {
  it('computes the NIT check digit by hand', () => {
    // 900373115 from the right × 3,7,13,17,19,23,29,37,41: 5×3 + 1×7 + 1×13 + 3×17 + 7×19 + 3×23 + 0 + 0 + 9×41
    // = 15 + 7 + 13 + 51 + 133 + 69 + 369 = 657; 657 mod 11 = 8; DV = 11 − 8 = 3.
    expect(nitCheckDigit('900373115')).toBe(3);
    // 800197268: 8×3 + 6×7 + 2×13 + 7×17 + 9×19 + 1×23 + 0 + 0 + 8×41 = 24+42+26+119+171+23+328 = 733; 733 mod 11 = 7; DV = 4.
    expect(nitCheckDigit('800197268')).toBe(4);
  });
  it('splits names into given names and surnames', () => {
    expect(splitName('Ana María Gómez Ruiz')).toEqual({ PrimerNombre: 'Ana', OtrosNombres: 'María', PrimerApellido: 'Gómez', SegundoApellido: 'Ruiz' });
    expect(splitName('Luis Pérez Soto')).toEqual({ PrimerNombre: 'Luis', OtrosNombres: '', PrimerApellido: 'Pérez', SegundoApellido: 'Soto' });
  });
});

describe('payroll.epayroll_configure and payroll.einvoice_submit', () => {
  const owner = testPrincipal();
  const doc = String(1_020_000_000 + Math.floor(Math.random() * 1e8));
  let ana: { id: string };
  let runId: string;

  beforeAll(async () => {
    const r = await payroll.call('employees.create', {
      name: 'Ana María Gómez Ruiz', document: { type: 'CC', number: doc }, position: 'Auxiliar', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    ana = r.output.employee;
  });

  it('configures the employer and refuses what does not fit', async () => {
    expect(await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-04' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.epayroll_configure', { ...SETTINGS, municipality: '05001' }, owner)).toMatchObject({ code: 'invalid_input', field: '/municipality' });
    expect(await payroll.call('payroll.epayroll_configure', { ...SETTINGS, nit: '900.373.115' }, owner)).toMatchObject({ code: 'invalid_input', field: '/nit' });
    expect(await payroll.call('payroll.epayroll_configure', { ...SETTINGS, environment: '3' }, owner)).toMatchObject({ code: 'invalid_input', field: '/environment' });
    const r = await payroll.call('payroll.epayroll_configure', SETTINGS, owner);
    expect(r.output.settings).toEqual({
      nit: '900373115', dv: 3, company_name: 'Tienda Andina SAS', department: '11', municipality: '11001', address: 'Calle 26 # 68-35',
      software_id: 'a1b2c3d4-sw', prefix: 'NE', environment: '2', payment_method: '42', next_number: 1, software_pin_set: true,
    });
    expect(JSON.stringify(r.output)).not.toContain('75315');
    // At rest the PIN is only sealed.
    const stored = await payroll.db.collection('payroll_epayroll_settings').findOne({ _id: owner.workspace as never });
    expect(stored).toMatchObject({ software_pin_sealed: expect.stringMatching(/^v1\./) });
    expect(stored).not.toHaveProperty('software_pin');
    expect(JSON.stringify(stored)).not.toContain('75315');
  });

  it('refuses a month whose run is not posted, and a bad month', async () => {
    const run = await payroll.call('payroll.run', { month: '2026-04' }, owner);
    expect(run.ok).toBe(true);
    runId = run.output.run.id;
    expect(await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-04' }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-13' }, owner)).toMatchObject({ code: 'invalid_input', field: '/month' });
    expect(await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-05' }, owner)).toMatchObject({ code: 'conflict' });
    // Ana alone, one minimum wage: net 185_992_800 (payslips.test.ts works it out).
    expect((await payroll.call('payroll.approve', { id: runId, amount: 185_992_800 }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id: runId }, owner)).ok).toBe(true);
  });

  it('builds a document the XSD accepts, whose CUNE recomputes by hand, and the sandbox accepts it', async () => {
    // Settings as written before sealing (the PIN in plain text) are still read: the CUNE below is the PIN's.
    const settingsColl = payroll.db.collection('payroll_epayroll_settings');
    await settingsColl.updateOne({ _id: owner.workspace as never }, { $set: { software_pin: '75315' }, $unset: { software_pin_sealed: '' } });
    const r = await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-04' }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    const d = r.output.document;
    expect(d).toMatchObject({ employee_id: ana.id, month: '2026-04', number: 'NE1', status: 'accepted', already_accepted: false, endpoint: 'builtin-sandbox (Cuadra; not DIAN)' });
    expect(d.authority).toMatchObject({ is_valid: true, status_code: '00', errors: [] });
    expect(d.authority.status_description).toContain('Sandbox');

    // The official schema (xmllint, independent of our code).
    const lint = xmllint(d.xml, XSD);
    expect(lint.ok, lint.out).toBe(true);

    const x = parse(d.xml);
    // Devengados: salary 175_090_500 → 1750905.00 for 30 days; transport 24_909_500 → 249095.00.
    expect(x.Devengados.Basico).toEqual({ DiasTrabajados: '30', SueldoTrabajado: '1750905.00' });
    expect(x.Devengados.Transporte).toEqual({ AuxilioTransporte: '249095.00' });
    // Deducciones: health and pension 4 % of 1.750.905 = 70.036,20 → the employee's share half up to the peso, 70.036.
    expect(x.Deducciones.Salud).toEqual({ Porcentaje: '4.00', Deduccion: '70036.00' });
    expect(x.Deducciones.FondoPension).toEqual({ Porcentaje: '4.00', Deduccion: '70036.00' });
    // Totals: 1.750.905 + 249.095 = 2.000.000; 70.036 × 2 = 140.072; 2.000.000 − 140.072 = 1.859.928.
    expect([x.DevengadosTotal, x.DeduccionesTotal, x.ComprobanteTotal]).toEqual(['2000000.00', '140072.00', '1859928.00']);
    expect(x.Trabajador).toMatchObject({ TipoDocumento: '13', NumeroDocumento: doc, PrimerNombre: 'Ana', OtrosNombres: 'María', PrimerApellido: 'Gómez', SegundoApellido: 'Ruiz', TipoContrato: '2', Sueldo: '1750905.00' });
    expect(x.Empleador).toMatchObject({ NIT: '900373115', DV: '3' });
    expect(x.Periodo).toMatchObject({ FechaIngreso: '2026-01-01', FechaLiquidacionInicio: '2026-04-01', FechaLiquidacionFin: '2026-04-30', TiempoLaborado: '120' });
    expect(x.InformacionGeneral).toMatchObject({ Ambiente: '2', TipoXML: '102', EncripCUNE: 'CUNE-SHA384', PeriodoNomina: '5', TipoMoneda: 'COP' });

    // The CUNE by hand: NumNE + FecNE + HorNE + ValDev + ValDed + ValTolNE + NitNE + DocEmp + TipoXML + SoftwarePin + TipAmb.
    const fec: string = x.InformacionGeneral.FechaGen;
    const hor: string = x.InformacionGeneral.HoraGen;
    expect(hor).toMatch(/^\d{2}:\d{2}:\d{2}-05:00$/);
    const byHand = 'NE1' + fec + hor + '2000000.00' + '140072.00' + '1859928.00' + '900373115' + doc + '102' + '75315' + '2';
    const expected = createHash('sha384').update(byHand).digest('hex');
    expect(x.InformacionGeneral.CUNE).toBe(expected);
    expect(d.cune).toBe(expected);
    expect(d.authority.document_key).toBe(expected);
    expect(x.CodigoQR).toBe(`https://catalogo-vpfe-hab.dian.gov.co/document/searchqr?documentkey=${expected}`);
    // SoftwareSC = SHA-384(SoftwareID + PIN + Numero).
    expect(x.ProveedorXML.SoftwareSC).toBe(createHash('sha384').update('a1b2c3d4-sw' + '75315' + 'NE1').digest('hex'));

    // The sandbox refuses what DIAN would: a changed total, a CUNE that does not match, production, an unknown software.
    const lookup = async (sw: string, nit: string) => (sw === 'a1b2c3d4-sw' && nit === '900373115' ? { software_id: sw, software_pin: '75315', nit } : null);
    const tampered = await sandboxAnswer(d.xml.replace('<ComprobanteTotal>1859928.00</ComprobanteTotal>', '<ComprobanteTotal>1859929.00</ComprobanteTotal>'), lookup);
    expect(tampered.is_valid).toBe(false);
    expect(tampered.errors.join('\n')).toMatch(/ComprobanteTotal no es DevengadosTotal menos DeduccionesTotal/);
    expect(tampered.errors.join('\n')).toMatch(/NIE024/);
    const wrongPin = await sandboxAnswer(d.xml, async (sw, nit) => ({ software_id: sw, software_pin: '00000', nit }));
    expect(wrongPin.errors.join('\n')).toMatch(/NIE024/);
    const prod = await sandboxAnswer(d.xml.replace('Ambiente="2"', 'Ambiente="1"'), lookup);
    expect(prod.errors.join('\n')).toMatch(/Ambiente debe ser 2/);
    expect((await sandboxAnswer(d.xml, async () => null)).errors.join('\n')).toMatch(/no están habilitados/);
    expect((await sandboxAnswer('<NominaIndividual><a></NominaIndividual>', lookup)).errors[0]).toMatch(/mal formado/);
    expect((await sandboxAnswer(d.xml.replace(/<Empleador [^>]*\/>/, ''), lookup)).errors).toContain('NIE: falta el elemento requerido Empleador.');
    // The start-up step seals it (one conditional update per document); a second run finds nothing plain.
    expect(await sealPlainEpayrollSettings(payroll.db)).toBeGreaterThanOrEqual(1);
    const sealed = await settingsColl.findOne({ _id: owner.workspace as never });
    expect(sealed).not.toHaveProperty('software_pin');
    expect(JSON.stringify(sealed)).not.toContain('75315');
    expect(await sealPlainEpayrollSettings(payroll.db)).toBe(0);
  });

  it('answers an accepted document again without resubmitting; other workspaces see nothing', async () => {
    const first = await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-04' }, owner);
    expect(first.output.document).toMatchObject({ number: 'NE1', status: 'accepted', already_accepted: true });
    const other = testPrincipal();
    expect(await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-04' }, other)).toMatchObject({ code: 'conflict' });
    expect((await payroll.call('payroll.epayroll_configure', SETTINGS, other)).ok).toBe(true);
    expect(await payroll.call('payroll.einvoice_submit', { employee_id: ana.id, month: '2026-04' }, other)).toMatchObject({ code: 'not_found' });
  });
});

describe('payroll.einvoice_submit for a contract ended mid-month', () => {
  it('carries FechaRetiro and the final settlement, passes the XSD, and its totals add up by hand', async () => {
    const owner = testPrincipal();
    expect((await payroll.call('payroll.epayroll_configure', { ...SETTINGS, prefix: 'NR' }, owner)).ok).toBe(true);
    const doc = String(1_030_000_000 + Math.floor(Math.random() * 1e8));
    const hired = await payroll.call('employees.create', {
      name: 'Luis Pérez Soto', document: { type: 'CC', number: doc }, position: 'Vendedor', hire_date: '2026-01-01',
      salary: { amount: 200_000_000, currency: 'COP' }, contract_type: 'fixed_term', term_end: '2026-12-31', arl_class: 1,
    }, owner);
    const id = hired.output.employee.id;
    // Settlement on 15 March (runs.test.ts, employees.terminate, works it out): severance 46_856_146, interest 1_171_404,
    // service bonus 46_856_146 (75 days), vacations 20_833_333 (75 days).
    expect((await payroll.call('employees.terminate', { id, date: '2026-03-15', reason: 'resignation' }, owner)).ok).toBe(true);
    const run = await payroll.call('payroll.run', { month: '2026-03' }, owner);
    // March 1–15: salary 200_000_000 × 15/30 = 100_000_000; transport 24_909_500 × 15/30 = 12_454_750.
    // Health and pension 4 % of 100_000_000 = 4_000_000 each. Net of the period = 112_454_750 − 8_000_000 = 104_454_750;
    // the run pays it with the settlement (a resignation: no indemnity), 104_454_750 + 115_717_029 = 220_171_779.
    expect(run.output.run.totals).toMatchObject({ net: 220_171_779, settlement: 115_717_029 });
    expect((await payroll.call('payroll.approve', { id: run.output.run.id, amount: 220_171_779 }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id: run.output.run.id }, owner)).ok).toBe(true);

    const r = await payroll.call('payroll.einvoice_submit', { employee_id: id, month: '2026-03' }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(r.output.document).toMatchObject({ number: 'NR1', status: 'accepted' });
    const lint = xmllint(r.output.document.xml, XSD);
    expect(lint.ok, lint.out).toBe(true);
    const x = parse(r.output.document.xml);
    expect(x.Periodo).toMatchObject({ FechaIngreso: '2026-01-01', FechaRetiro: '2026-03-15', FechaLiquidacionInicio: '2026-03-01', FechaLiquidacionFin: '2026-03-15', TiempoLaborado: '75' });
    expect(x.Trabajador).toMatchObject({ TipoContrato: '1', PrimerNombre: 'Luis', PrimerApellido: 'Pérez', SegundoApellido: 'Soto' });
    expect(x.Devengados.Basico).toEqual({ DiasTrabajados: '15', SueldoTrabajado: '1000000.00' });
    expect(x.Devengados.Transporte).toEqual({ AuxilioTransporte: '124547.50' });
    // Vacations owed: 75 days served × 15/360 = 3.125 → 3 days, 208.333,33.
    expect(x.Devengados.Vacaciones).toEqual({ VacacionesCompensadas: { Cantidad: '3', Pago: '208333.33' } });
    expect(x.Devengados.Primas).toEqual({ Cantidad: '75', Pago: '468561.46' });
    expect(x.Devengados.Cesantias).toEqual({ Pago: '468561.46', Porcentaje: '12.00', PagoIntereses: '11714.04' });
    // Devengados = 1.000.000 + 124.547,50 + 208.333,33 + 468.561,46 + 468.561,46 + 11.714,04 = 2.281.717,79.
    // Deducciones = 40.000 + 40.000 = 80.000. Comprobante = 2.281.717,79 − 80.000 = 2.201.717,79.
    expect([x.DevengadosTotal, x.DeduccionesTotal, x.ComprobanteTotal]).toEqual(['2281717.79', '80000.00', '2201717.79']);
    const byHand = 'NR1' + x.InformacionGeneral.FechaGen + x.InformacionGeneral.HoraGen + '2281717.79' + '80000.00' + '2201717.79' + '900373115' + doc + '102' + '75315' + '2';
    expect(x.InformacionGeneral.CUNE).toBe(createHash('sha384').update(byHand).digest('hex'));
  });
});

describe('payroll.einvoice_submit for a month paid in two halves', () => {
  it('waits for both halves, then sums them into one monthly document (PeriodoNomina 4, two payment dates)', async () => {
    const owner = testPrincipal();
    expect((await payroll.call('payroll.epayroll_configure', { ...SETTINGS, prefix: 'NQ' }, owner)).ok).toBe(true);
    const hired = await payroll.call('employees.create', {
      name: 'Carla Ríos', document: { type: 'CC', number: String(1_040_000_000 + Math.floor(Math.random() * 1e8)) }, position: 'Cajera', hire_date: '2026-01-01',
      salary: { amount: 175_090_500, currency: 'COP' }, contract_type: 'indefinite', arl_class: 1,
    }, owner);
    const id = hired.output.employee.id;
    const post = async (frequency: string) => {
      const run = await payroll.call('payroll.run', { month: '2026-06', frequency }, owner);
      expect(run.ok, JSON.stringify(run)).toBe(true);
      expect((await payroll.call('payroll.approve', { id: run.output.run.id, amount: run.output.run.totals.net }, owner)).ok).toBe(true);
      expect((await payroll.call('payroll.post', { id: run.output.run.id }, owner)).ok).toBe(true);
      return run.output.payslips[0];
    };
    const first = await post('first_half');
    expect(await payroll.call('payroll.einvoice_submit', { employee_id: id, month: '2026-06' }, owner)).toMatchObject({ code: 'conflict' });
    const second = await post('second_half');
    const r = await payroll.call('payroll.einvoice_submit', { employee_id: id, month: '2026-06' }, owner);
    expect(r.ok, JSON.stringify(r)).toBe(true);
    const lint = xmllint(r.output.document.xml, XSD);
    expect(lint.ok, lint.out).toBe(true);
    const x = parse(r.output.document.xml);
    expect(x.InformacionGeneral.PeriodoNomina).toBe('4');
    expect(x.FechasPagos.FechaPago).toHaveLength(2);
    // 15 + 15 days; each half's salary is 175_090_500 × 15/30 = 87_545_250, together 175_090_500.
    expect(x.Devengados.Basico).toEqual({ DiasTrabajados: '30', SueldoTrabajado: '1750905.00' });
    // The document's net is the two halves' nets together.
    const net = first.totals.net + second.totals.net;
    expect(x.ComprobanteTotal).toBe(`${Math.trunc(net / 100)}.${String(net % 100).padStart(2, '0')}`);
  });
});
