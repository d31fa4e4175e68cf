import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput, testPrincipal, type TestSubgraph } from '@cuadra/shared/testing';
import { pdf } from '../src/modules/invoices/tools/pdf.ts';
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
    expect(flat).toContain('Fecha: 2026-11-02');
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
