import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Printing HTML to PDF with Chromium's own print engine, for every service that prints (invoices'
 * representation and statements, payroll's payslips): one hardened way, so no printer fetches what
 * a page names.
 */

/**
 * Debian's Chromium (`apt-get install chromium`); `CUADRA_CHROMIUM` overrides it (`CHROMIUM_PATH`,
 * payroll's older name, still read). Never a browser download.
 */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CUADRA_CHROMIUM?.trim() || env.CHROMIUM_PATH?.trim() || '/usr/bin/chromium';
}

/** The flags INFRA.md asks for: no sandbox as root, and no background traffic on a closed network. */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** At most this many Chromium processes print at once in one service (each costs ~150 MB). */
const MAX_PRINTERS = 2;
let printing = 0;
const waiting: (() => void)[] = [];

async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (printing >= MAX_PRINTERS) await new Promise<void>((resolve) => waiting.push(resolve));
  printing++;
  try {
    return await fn();
  } finally {
    printing--;
    waiting.shift()?.();
  }
}

/**
 * Prints a self-contained HTML page (images as data: URIs) to an A4 PDF with Chromium's own
 * print. Every network request the page would make is refused: what is printed is exactly the
 * HTML given. One short-lived browser per call, with a fresh empty profile removed afterwards.
 */
export async function htmlToPdf(html: string): Promise<Buffer> {
  return slot(async () => {
    const profile = await mkdtemp(path.join(tmpdir(), 'cuadra-pdf-'));
    // Loaded on the first print, not at the service's start (it was a fifth of the start's CPU).
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_FLAGS, offline: true, javaScriptEnabled: false, timeout: 30_000 });
    try {
      const page = browser.pages()[0] ?? (await browser.newPage());
      await page.route(/^(?!data:)/, (route) => route.abort());
      await page.setContent(html, { waitUntil: 'load', timeout: 30_000 });
      return await page.pdf({ format: 'A4', printBackground: true, margin: { top: '12mm', bottom: '12mm', left: '12mm', right: '12mm' } });
    } finally {
      await browser.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true }).catch(() => undefined);
    }
  });
}
