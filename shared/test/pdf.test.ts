import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, htmlToPdf } from '../src/pdf.ts';

// The one printer of every service (invoices' representation and statements, payroll's payslips):
// what a page names on the network is never fetched, whatever the page says.
let server: Server;
let hits: string[] = [];
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.end('body{color:red}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('htmlToPdf', () => {
  it('prints the page as given and fetches nothing it names (images, styles, frames, scripts)', async () => {
    hits = [];
    const html = `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="${base}/style.css"></head>
      <body><h1>Desprendible de pago — Ana Gómez</h1><img src="${base}/logo.png"><iframe src="${base}/frame"></iframe>
      <script>fetch('${base}/beacon'); document.body.append('SCRIPT-RAN')</script><p>Total: $ 1.300.000</p></body></html>`;
    const pdf = await htmlToPdf(html);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // Independent reading of the PDF: the text is there, the script's never ran.
    const dir = mkdtempSync(path.join(tmpdir(), 'cuadra-pdf-test-'));
    writeFileSync(path.join(dir, 'p.pdf'), pdf);
    const text = execFileSync('pdftotext', ['-enc', 'UTF-8', path.join(dir, 'p.pdf'), '-'], { encoding: 'utf8' });
    expect(text).toContain('Desprendible de pago — Ana Gómez');
    expect(text).toContain('Total: $ 1.300.000');
    expect(text).not.toContain('SCRIPT-RAN');
    await new Promise((r) => setTimeout(r, 200));
    expect(hits).toEqual([]);
  }, 60_000);

  it('uses CUADRA_CHROMIUM, then payroll’s older CHROMIUM_PATH, then Debian’s Chromium', () => {
    expect(chromiumPath({ CUADRA_CHROMIUM: '/opt/c', CHROMIUM_PATH: '/opt/p' })).toBe('/opt/c');
    expect(chromiumPath({ CHROMIUM_PATH: '/opt/p' })).toBe('/opt/p');
    expect(chromiumPath({})).toBe('/usr/bin/chromium');
  });
});
