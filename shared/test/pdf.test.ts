import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { chromiumPath, closePrinter, htmlToPdf } from '../src/pdf.ts';

/** The Chromium processes this test process started (its direct children whose command is Chromium). */
function chromiumChildren(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('chromium')) out.push(Number(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

/** pdftotext (poppler-utils) of a PDF. */
function pdfText(pdf: Buffer): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cuadra-pdf-test-'));
  writeFileSync(path.join(dir, 'p.pdf'), pdf);
  return execFileSync('pdftotext', ['-enc', 'UTF-8', path.join(dir, 'p.pdf'), '-'], { encoding: 'utf8' });
}

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

  it('prints on a cold system: three calls at once, right after start with a home Chromium has never seen, all print (issue 30: two of three failed)', async () => {
    await closePrinter();
    const home = mkdtempSync(path.join(tmpdir(), 'cuadra-cold-home-'));
    const saved = { HOME: process.env.HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    Object.assign(process.env, { HOME: home, XDG_CACHE_HOME: path.join(home, '.cache'), XDG_CONFIG_HOME: path.join(home, '.config') });
    try {
      const pdfs = await Promise.all([1, 2, 3].map((n) => htmlToPdf(`<!doctype html><html><body><h1>Factura frío ${n}</h1></body></html>`)));
      pdfs.forEach((pdf, i) => expect(pdfText(pdf)).toContain(`Factura frío ${i + 1}`));
    } finally {
      Object.assign(process.env, saved);
    }
  }, 120_000);

  it('a browser killed in the middle of a print: the print is made again in a new one, and the next print works', async () => {
    await closePrinter();
    // A long document, so the kill lands while it is being laid out or printed.
    const rows = Array.from({ length: 4000 }, (_, i) => `<tr><td>${i}</td><td>Línea ${i} de la factura larga</td><td>COP ${i}.000,00</td></tr>`).join('');
    const html = `<!doctype html><html><body><h1>Documento largo</h1><table>${rows}</table><p>FIN-DEL-DOCUMENTO</p></body></html>`;
    const printed = htmlToPdf(html);
    let killed = 0;
    for (let i = 0; i < 400 && killed === 0; i++) {
      for (const pid of chromiumChildren()) {
        process.kill(pid, 'SIGKILL');
        killed++;
      }
      if (killed === 0) await new Promise((r) => setTimeout(r, 25));
    }
    expect(killed).toBeGreaterThan(0);
    const pdf = await printed;
    expect(pdfText(pdf)).toContain('FIN-DEL-DOCUMENTO');
    expect(pdfText(await htmlToPdf('<!doctype html><p>Después</p>'))).toContain('Después');
    await closePrinter();
  }, 120_000);

  it('uses CUADRA_CHROMIUM, then payroll’s older CHROMIUM_PATH, then Debian’s Chromium', () => {
    expect(chromiumPath({ CUADRA_CHROMIUM: '/opt/c', CHROMIUM_PATH: '/opt/p' })).toBe('/opt/c');
    expect(chromiumPath({ CHROMIUM_PATH: '/opt/p' })).toBe('/opt/p');
    expect(chromiumPath({})).toBe('/usr/bin/chromium');
  });
});
