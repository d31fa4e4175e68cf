import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSubgraph, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { readMaildir } from '../../../../scripts/smtp.ts';
import { createServer, name } from '../../src/server.ts';
import { formatCop } from '../../src/modules/payroll/payslip_document.ts';
import { hirer, pdfText } from '../support.ts';

/**
 * Payslips (issue 18): the page in Spanish, the PDF printed by Chromium and read back with
 * pdftotext (poppler), and the e-mail delivered by the real SMTP server (exim4) to its Maildir.
 */

let payroll: TestSubgraph;
beforeAll(async () => {
  payroll = await startTestSubgraph(name, createServer);
});
afterAll(async () => {
  await payroll?.close();
});

const hire = hirer(() => payroll, { position: 'Auxiliar' });

/** The base64 body of the MIME part with `Content-Type: application/pdf` in a raw message. */
function pdfPartOf(raw: string): string | null {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(raw)?.[1];
  if (!boundary) return null;
  for (const part of raw.split(`--${boundary}`)) {
    const [head, ...body] = part.split(/\r?\n\r?\n/);
    if (/Content-Type:\s*application\/pdf/i.test(head)) return body.join('\n').replace(/\s+/g, '');
  }
  return null;
}

describe('formatCop', () => {
  it('writes pesos with dots for thousands and centavos only when there are any', () => {
    expect(formatCop(120_000_000)).toBe('COP 1.200.000');
    expect(formatCop(185_992_650)).toBe('COP 1.859.926,50');
    expect(formatCop(0)).toBe('COP 0');
    expect(formatCop(99)).toBe('COP 0,99');
  });
});

describe('payroll.payslip and payroll.send_payslips', () => {
  const owner = testPrincipal();
  let ana: { id: string };
  let beto: { id: string };
  let runId: string;
  const anaMail = `ana.${Date.now()}@example.co`;

  beforeAll(async () => {
    ana = await hire(owner, { name: 'Ana Mínimo', email: anaMail });
    beto = await hire(owner, { name: 'Beto Sincorreo' });
    const r = await payroll.call('payroll.run', { month: '2026-04' }, owner);
    expect(r.ok).toBe(true);
    runId = r.output.run.id;
  });

  it('is refused until the employer\'s name and NIT are set, which then head the page (issue 30 item 11)', async () => {
    expect(await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id }, owner)).toMatchObject({ code: 'conflict' });
    expect(await payroll.call('payroll.employer_configure', { company_name: 'Tienda Andina SAS', nit: '900.373.115' }, owner)).toMatchObject({ code: 'invalid_input', field: '/nit' });
    expect(await payroll.call('payroll.employer_configure', { company_name: '', nit: '900373115' }, owner)).toMatchObject({ code: 'invalid_input', field: '/company_name' });
    const set = await payroll.call('payroll.employer_configure', { company_name: ' Tienda Andina SAS ', nit: '900373115' }, owner);
    // DV of 900373115 worked out in epayroll.test.ts: 3.
    expect(set.output.employer).toEqual({ company_name: 'Tienda Andina SAS', nit: '900373115', dv: 3 });
    const r = await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id }, owner);
    expect(r.output.content).toContain('<dt>Empleador</dt><dd id="employer">Tienda Andina SAS · NIT 900.373.115-3</dd>');
    // Another workspace's employer is not this one's.
    expect(await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id }, testPrincipal())).toMatchObject({ code: 'not_found' });
  });

  it('renders the page in Spanish with the net pay the run computed, employer costs only when asked', async () => {
    // Ana, one minimum wage in April 2026: salary 175_090_500 + transport 24_909_500 = 200_000_000.
    // IBC 175_090_500 (already whole pesos); health 4 % = 70.036,20 → half up to the peso 70.036 (7_003_600); pension the same.
    // Net = 200_000_000 − 14_007_200 = 185_992_800 → "COP 1.859.928".
    const r = await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id }, owner);
    expect(r.ok).toBe(true);
    expect(r.output).toMatchObject({ format: 'html', content_type: 'text/html; charset=utf-8', net: 185_992_800 });
    const html: string = r.output.content;
    expect(html).toContain('lang="es-CO"');
    expect(html).toContain('Neto a pagar: <span id="net">COP 1.859.928</span>');
    expect(html).toContain('Auxilio de transporte');
    expect(html).toContain('COP 1.750.905');
    expect(html).toContain('Borrador');
    expect(html).not.toContain('Aportes del empleador');
    const full = await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id, employer_costs: true }, owner);
    // Employer pension: PILA declares 16 % of 1.750.905 = 280.144,80 → 280.200; less the employee's 70.036 = 210.164.
    expect(full.output.content).toContain('Aportes del empleador');
    expect(full.output.content).toContain('COP 210.164');
  });

  it('prints the PDF with Chromium; pdftotext reads the net pay', async () => {
    const r = await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id, format: 'pdf' }, owner);
    expect(r.output).toMatchObject({ format: 'pdf', content_type: 'application/pdf', net: 185_992_800 });
    expect(Buffer.from(r.output.content, 'base64').subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(r.output.content);
    expect(text).toContain('Desprendible de nómina');
    expect(text).toMatch(/Empleador\s+Tienda Andina SAS · NIT 900\.373\.115-3/);
    expect(text).toContain('Ana Mínimo');
    expect(text).toMatch(/Neto a pagar: COP 1\.859\.928/);
  }, 60_000);

  it('refuses an unknown run, an employee not in the run, a bad format, and other workspaces', async () => {
    expect(await payroll.call('payroll.payslip', { run_id: 'nope', employee_id: ana.id }, owner)).toMatchObject({ code: 'not_found' });
    expect(await payroll.call('payroll.payslip', { run_id: runId, employee_id: 'nobody' }, owner)).toMatchObject({ code: 'not_found' });
    expect(await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id, format: 'docx' }, owner)).toMatchObject({ code: 'invalid_input', field: '/format' });
    expect(await payroll.call('payroll.payslip', { run_id: runId, employee_id: ana.id }, testPrincipal())).toMatchObject({ code: 'not_found' });
    expect(await payroll.call('payroll.send_payslips', { run_id: runId }, testPrincipal())).toMatchObject({ code: 'not_found' });
  });

  it('sends only after posting, to the employees with e-mail, once', async () => {
    expect(await payroll.call('payroll.send_payslips', { run_id: runId }, owner)).toMatchObject({ code: 'conflict' });
    const run = (await payroll.call('payroll.payslip', { run_id: runId, employee_id: beto.id }, owner)).output;
    expect(run.net).toBe(185_992_800);
    // Two minimum-wage employees: total net 2 × 185_992_800 = 371_985_600.
    expect((await payroll.call('payroll.approve', { id: runId, amount: 371_985_600 }, owner)).ok).toBe(true);
    expect((await payroll.call('payroll.post', { id: runId }, owner)).ok).toBe(true);

    const sent = await payroll.call('payroll.send_payslips', { run_id: runId }, owner);
    expect(sent.ok).toBe(true);
    expect(sent.output.sent).toBe(1);
    const byId = Object.fromEntries(sent.output.results.map((x: any) => [x.employee_id, x]));
    expect(byId[ana.id]).toMatchObject({ to: anaMail, status: 'sent', error: null });
    expect(byId[beto.id]).toMatchObject({ to: null, status: 'no_email' });

    // The real SMTP server delivered it: read its Maildir.
    let raw: string | undefined;
    for (let i = 0; i < 100 && !raw; i++) {
      raw = readMaildir(process.env.CUADRA_MAILDIR!).map((m) => m.raw).find((m) => m.toLowerCase().includes(`envelope-to: ${anaMail}`));
      if (!raw) await new Promise((res) => setTimeout(res, 100));
    }
    expect(raw, 'delivered to the Maildir').toBeDefined();
    expect(raw).toMatch(/Subject: =\?UTF-8\?|Subject: Desprendible de n/);
    const pdf = pdfPartOf(raw!);
    expect(pdf).not.toBeNull();
    expect(pdfText(pdf!)).toMatch(/Neto a pagar: COP 1\.859\.928/);
    expect(pdfText(pdf!)).toMatch(/Tienda Andina SAS · NIT 900\.373\.115-3/);

    // A second call sends nothing again.
    const again = await payroll.call('payroll.send_payslips', { run_id: runId }, owner);
    expect(again.output.sent).toBe(0);
    expect(again.output.results.find((x: any) => x.employee_id === ana.id)).toMatchObject({ status: 'already_sent' });
  }, 60_000);
});
