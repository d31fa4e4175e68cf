import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { pdf } from '../src/modules/invoices/tools/pdf.ts';
import { closePrinter } from '@cuadra/shared/pdf';
import { configuredWorkspace, draft, startInvoices } from './setup.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'inv-pdf-'));

describe('invoices.pdf: the graphic representation, printed by Chromium', () => {
  let sg: TestSubgraph;
  beforeAll(async () => {
    sg = await startInvoices();
  });
  afterAll(async () => {
    await sg?.close();
  });

  it('holds the legally required content, read back by pdftotext, and a QR code zbarimg decodes to DIAN’s text', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    const posted = await sg.call('invoices.post', { id: inv.id }, owner);
    expect(posted.ok).toBe(true);
    const got = (await sg.call('invoices.get', { id: inv.id }, owner)).output.invoice;
    const r = await sg.call('invoices.pdf', { id: inv.id }, owner);
    expect(r.ok, r.message).toBe(true);
    checkOutput('invoices.pdf', pdf.output, r.output);
    const bytes = Buffer.from(r.output.content_base64, 'base64');
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(r.output.bytes).toBe(bytes.length);
    expect(r.output.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(r.output.filename).toBe(`${got.number}.pdf`);
    const file = join(dir, `${got.number}.pdf`);
    writeFileSync(file, bytes);

    // pdftotext (poppler-utils) reads the text back, independently of our code.
    const { stdout: text } = await run('pdftotext', ['-layout', file, '-']);
    const flat = text.replace(/\s+/g, ' ');
    const compact = text.replace(/\s+/g, '');
    // Hand calculation: 2 × 150.000,00 = 300.000,00; IVA 19 % of 300.000,00 = 57.000,00; total 357.000,00.
    expect(flat).toContain('COP 300.000,00');
    expect(flat).toContain('IVA 19 % sobre COP 300.000,00 COP 57.000,00');
    expect(flat).toMatch(/Total COP 357\.000,00/);
    expect(flat).toMatch(/A pagar COP 357\.000,00/);
    expect(compact).toContain(got.cufe); // the 96 hex digits may wrap across lines
    expect(flat).toContain(`Factura electrónica de venta ${got.number}`);
    expect(flat).toContain('Cuadra Demo SAS NIT 900373115-3');
    expect(flat).toContain('Tienda Andina SAS — NIT 800197268-4');
    expect(flat).toContain('Resolución DIAN de facturación N.º 18760000001, numeración SETP990000000 a SETP995000000');
    expect(flat).toContain(`Fecha y hora de expedición: 2026-11-02 ${got.issue_time}`);
    expect(flat).toContain('Vence: 2026-12-02');
    expect(flat).toContain('Consultoría');

    // The page as an image (pdftoppm), then the QR code decoded by zbarimg (zbar-tools).
    await run('pdftoppm', ['-r', '300', '-png', '-f', '1', '-l', '1', '-singlefile', file, join(dir, 'page')]);
    const { stdout: qr } = await run('zbarimg', ['--raw', '-q', '-Sdisable', '-Sqrcode.enable', join(dir, 'page.png')]);
    const expected = [
      `NumFac: ${got.number}`, 'FecFac: 2026-11-02', `HorFac: ${got.issue_time}`, 'NitFac: 900373115', 'DocAdq: 800197268',
      'ValFac: 300000.00', 'ValIva: 57000.00', 'ValOtroIm: 0.00', 'ValTolFac: 357000.00', `CUFE: ${got.cufe}`,
      `QRCode: https://catalogo-vpfe-hab.dian.gov.co/document/searchqr?documentkey=${got.cufe}`,
    ].join('\n');
    expect(qr.replace(/\n$/, '')).toBe(expected);
  }, 60_000);

  it('prints a credit note with its CUDE and the invoice it credits', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    await sg.call('invoices.post', { id: inv.id }, owner);
    const original = (await sg.call('invoices.get', { id: inv.id }, owner)).output.invoice;
    const cn = await sg.call('invoices.credit_note', { invoice_id: inv.id, concept: 2, reason: 'Anulación' }, owner);
    expect(cn.ok, cn.message).toBe(true);
    const note = cn.output.credit_note;
    const r = await sg.call('invoices.pdf', { id: note.id }, owner);
    expect(r.ok, r.message).toBe(true);
    const file = join(dir, 'nc.pdf');
    writeFileSync(file, Buffer.from(r.output.content_base64, 'base64'));
    const { stdout: text } = await run('pdftotext', [file, '-']);
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain(`Nota crédito electrónica ${note.number}`);
    expect(flat).toContain(`Nota crédito a la factura ${original.number} del 2026-11-02`);
    expect(text.replace(/\s+/g, '')).toContain(`(CUFE${original.cufe})`);
    expect(text.replace(/\s+/g, '')).toContain(`CUDE:${note.cude}`);
  }, 60_000);

  it('shows what Resolución 000165 de 2023 asks of the representation: Spanish status, each discount and charge, the document\'s own, withholdings, payment form and means, the issuer\'s responsibilities and address, the software and its maker', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner, {
      lines: [
        { description: 'Cajas de cartón', quantity: 3, unit_price: 1_000_050, discount_bps: 1000, charges: [{ reason: 'Embalaje', rate_bps: 250 }], tax_rate_ppm: 190000 },
        { description: 'Consultoría', quantity: 2, unit_price: 15_000_000, tax_rate_ppm: 190000 },
      ],
      allowance_charges: [{ charge: false, reason: 'Descuento comercial', rate_bps: 200 }, { charge: true, reason: 'Flete', amount: 5_000_000 }],
      withholdings: [{ type: 'retefuente', rate_ppm: 40000 }],
    });
    expect((await sg.call('invoices.post', { id: inv.id }, owner)).ok).toBe(true);
    const r = await sg.call('invoices.pdf', { id: inv.id }, owner);
    expect(r.ok, r.message).toBe(true);
    const file = join(dir, 'rich.pdf');
    writeFileSync(file, Buffer.from(r.output.content_base64, 'base64'));
    // Reading order (not -layout): a table cell's wrapped text reads on.
    const flat = (await run('pdftotext', [file, '-'])).stdout.replace(/\s+/g, ' ');
    // Hand calculation (the same invoice as einvoicing-documents.test.ts): line 1 gross 30,001.50, −10 % = 3,000.15,
    // +2.5 % = 750.04, net 27,751.39; the document −2 % = 6,555.03 and +50,000.00; total 433,469.12;
    // retefuente 4 % of 27,751.39 = 1,110.06 and of 300,000.00 = 12,000.00 → 13,110.06; payable 420,359.06.
    expect(flat).toContain('Estado: Emitida');
    expect(flat).not.toMatch(/Estado: posted/);
    expect(flat).toContain('10 % (−COP 3.000,15)');
    expect(flat).toContain('Cargo Embalaje 2,5 %: +COP 750,04');
    expect(flat).toContain('Descuento: Descuento comercial (2 %) −COP 6.555,03');
    expect(flat).toContain('Cargo: Flete COP 50.000,00');
    expect(flat).toContain('COP 27.751,39');
    expect(flat).toMatch(/Total COP 433\.469,12/);
    expect(flat).toContain('Retención en la fuente 4,00 % sobre COP 327.751,39 −COP 13.110,06');
    expect(flat).toMatch(/A pagar COP 420\.359,06/);
    expect(flat).toContain('Forma de pago: Crédito (vence 2026-12-02) · Medio de pago: Transferencia Débito Bancaria');
    expect(flat).toContain('Responsable de IVA · Autorretenedor · Calle 93 # 11-28 Oficina 502 — Bogotá, D.c., Bogotá');
    expect(flat).toContain('Razón social: CUADRA DEMO S.A.S.');
    expect(flat).toContain('Software: Cuadra — fabricante Cuadra Software SAS, NIT 901234567-7');
    expect(flat).toContain('Carrera 43A # 1-50 — Medellín, Antioquia');
  }, 60_000);

  it('prints three documents asked for at once on a cold printer (no browser running yet): all three print (issue 30: two of three failed)', async () => {
    const owner = await configuredWorkspace(sg);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const inv = await draft(sg, owner);
      expect((await sg.call('invoices.post', { id: inv.id }, owner)).ok).toBe(true);
      ids.push(inv.id);
    }
    await closePrinter();
    const printed = await Promise.all(ids.map((id) => sg.call('invoices.pdf', { id }, owner)));
    for (const [i, r] of printed.entries()) {
      expect(r.ok, r.message).toBe(true);
      const file = join(dir, `cold-${i}.pdf`);
      writeFileSync(file, Buffer.from(r.output.content_base64, 'base64'));
      expect((await run('pdftotext', [file, '-'])).stdout.replace(/\s+/g, '')).toContain(r.output.number);
    }
  }, 120_000);

  it('refuses a draft, an unknown id and a malformed input, and another workspace sees nothing', async () => {
    const owner = await configuredWorkspace(sg);
    const inv = await draft(sg, owner);
    expect(await sg.call('invoices.pdf', { id: inv.id }, owner)).toMatchObject({ ok: false, code: 'conflict' });
    expect(await sg.call('invoices.pdf', { id: 'inv_nobody' }, owner)).toMatchObject({ ok: false, code: 'not_found' });
    expect(await sg.call('invoices.pdf', { id: '' }, owner)).toMatchObject({ ok: false, code: 'invalid_input', field: '/id' });
    expect(await sg.call('invoices.pdf', { id: inv.id, format: 'x' }, owner)).toMatchObject({ ok: false, code: 'invalid_input' });
    await sg.call('invoices.post', { id: inv.id }, owner);
    const stranger = testPrincipal();
    expect(await sg.call('invoices.pdf', { id: inv.id }, stranger)).toMatchObject({ ok: false, code: 'not_found' });
  });
});
