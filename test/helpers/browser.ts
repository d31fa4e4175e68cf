import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { repoRoot } from '../../scripts/infra.ts';
import { CHROMIUM_FLAGS, chromiumPath } from '../../shared/src/pdf.ts';
import { askTestPool } from '../../scripts/test-pool.ts';

/** Debian's Chromium, driven by playwright-core (INFRA.md): never a downloaded browser; the flags it needs here. */
export const CHROMIUM = chromiumPath();
export const CHROMIUM_ARGS = CHROMIUM_FLAGS;
/** Where page tests keep their screenshots (a person looks at them). */
export const SHOTS = path.join(process.env.CUADRA_TEST_OUTPUT ?? path.join(repoRoot, 'test-output'), 'screenshots');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A browser context of this file's own — its own cookies, storage and pages, as a separate
 * browser profile would have — in the run's one Chromium (Debian's, started once by the test
 * pool, scripts/test-pool.ts). Closing the context lets go of the browser; the pool stops it when
 * the run ends.
 */
export async function openBrowserContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const { ws_endpoint } = await askTestPool<{ ws_endpoint: string }>('browser');
  const browser = await chromium.connect(ws_endpoint);
  const context = await browser.newContext(options);
  // Closing the context also ends this file's connection to the browser (not the browser).
  const closeContext = context.close.bind(context);
  context.close = async (closeOptions) => {
    await closeContext(closeOptions);
    await browser.close();
  };
  return context;
}

/** A browser of the file's own as it sees it (a fresh context in the run's one Chromium); `close` ends it. */
export async function openBrowser(viewport = { width: 1280, height: 800 }): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  mkdirSync(SHOTS, { recursive: true });
  const context = await openBrowserContext({ viewport });
  return { context, close: () => context.close() };
}

/** A new page whose console errors and CSP reports land in `problems`. */
export async function pageWatching(context: BrowserContext, problems: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return page;
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }));
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
