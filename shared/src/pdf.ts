import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';

/**
 * Printing HTML to PDF with Chromium's own print engine, for every service that prints (invoices'
 * representation and statements, payroll's payslips): one hardened way, so no printer fetches what
 * a page names, and a document a person asks for does not fail because the browser was cold.
 *
 * One browser per service process, started on the first print and kept warm (each print gets a
 * fresh, isolated, offline context in it), with a home of its own: a cold Chromium otherwise makes
 * its NSS database and font cache in the user's home, and several started at once raced there and
 * crashed (the audit of issue 30 saw two of three cold prints fail). Starting is done once, however
 * many prints wait for it; a browser that dies is started again and the print tried once more; an
 * idle browser is closed after a while and started again when needed.
 */

/**
 * Debian's Chromium (`apt-get install chromium`); `CUADRA_CHROMIUM` overrides it (`CHROMIUM_PATH`,
 * payroll's older name, still read). Never a browser download.
 */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CUADRA_CHROMIUM?.trim() || env.CHROMIUM_PATH?.trim() || '/usr/bin/chromium';
}

/** The flags INFRA.md asks for: no sandbox as root, and no background traffic on a closed network. */
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

/** At most this many pages print at once in one service (a page costs a renderer process). */
const MAX_PAGES = 3;
/** A cold start on a loaded machine (2 cores, several services starting) takes seconds; this is its ceiling. */
const LAUNCH_TIMEOUT_MS = 120_000;
/** The warm browser is closed after this long without a print. */
const IDLE_CLOSE_MS = 10 * 60_000;

let printing = 0;
const waiting: (() => void)[] = [];

async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (printing >= MAX_PAGES) await new Promise<void>((resolve) => waiting.push(resolve));
  printing++;
  try {
    return await fn();
  } finally {
    printing--;
    waiting.shift()?.();
  }
}

interface Warm {
  browser: Browser;
  home: string;
}

let warm: Promise<Warm> | null = null;
/** The browser `warm` resolved to, once it has. */
let current: Warm | null = null;
let idle: NodeJS.Timeout | null = null;
let launches = 0;

/** Starts the service's browser, once: concurrent prints share the one start. */
function browser(): Promise<Warm> {
  warm ??= (async () => {
    // Loaded on the first print, not at the service's start (it was a fifth of the start's CPU).
    const { chromium } = await import('playwright-core');
    const home = await mkdtemp(path.join(tmpdir(), 'cuadra-pdf-'));
    launches++;
    try {
      const b = await chromium.launch({
        executablePath: chromiumPath(), headless: true, args: CHROMIUM_FLAGS, timeout: LAUNCH_TIMEOUT_MS,
        // Its own home: NSS database, font cache and config made once, by this browser only.
        env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache') },
      });
      current = { browser: b, home };
      b.on('disconnected', () => forget(b));
      return current;
    } catch (err) {
      warm = null;
      await rm(home, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
  })();
  return warm;
}

/** Drops a browser that is gone (or closing), so the next print starts another. */
function forget(b: Browser): void {
  if (current?.browser !== b) return;
  const home = current.home;
  current = null;
  warm = null;
  void rm(home, { recursive: true, force: true }).catch(() => undefined);
}

/** Closes the warm browser after a quiet while (restarted on the next print). */
function closeWhenIdle(): void {
  if (idle) clearTimeout(idle);
  idle = setTimeout(() => {
    idle = null;
    if (printing > 0 || !warm) return;
    void closePrinter();
  }, IDLE_CLOSE_MS);
  idle.unref();
}

/** Closes this process's browser now (tests; a service that stops). */
export async function closePrinter(): Promise<void> {
  const w = await warm?.catch(() => null);
  warm = null;
  current = null;
  if (!w) return;
  await w.browser.close().catch(() => undefined);
  await rm(w.home, { recursive: true, force: true }).catch(() => undefined);
}

/** What the printer has done in this process: browsers started (for tests and the bench). */
export function printerStats(): { launches: number; warm: boolean } {
  return { launches, warm: warm !== null };
}

/** One print in a fresh, offline, script-less context of the warm browser. */
async function printOnce(b: Browser, html: string): Promise<Buffer> {
  const context = await b.newContext({ offline: true, javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    // Every request the page would make is refused: what is printed is exactly the HTML given.
    await page.route(/^(?!data:)/, (route) => route.abort());
    await page.setContent(html, { waitUntil: 'load', timeout: 60_000 });
    return await page.pdf({ format: 'A4', printBackground: true, margin: { top: '12mm', bottom: '12mm', left: '12mm', right: '12mm' } });
  } finally {
    await context.close().catch(() => undefined);
  }
}

/**
 * Prints a self-contained HTML page (images as data: URIs) to an A4 PDF with Chromium's own
 * print. Every network request the page would make is refused. A print that fails because the
 * browser died under it (a crash, a kill) is tried once more in a browser started afresh.
 */
export async function htmlToPdf(html: string): Promise<Buffer> {
  return slot(async () => {
    // A cold start that fails is made once more: nothing else has happened yet.
    const w = await browser().catch(() => browser());
    try {
      return await printOnce(w.browser, html);
    } catch (err) {
      if (w.browser.isConnected()) throw err;
      // The browser is gone (it died mid-print): start another and print again, once.
      forget(w.browser);
      return await printOnce((await browser()).browser, html);
    } finally {
      closeWhenIdle();
    }
  });
}
