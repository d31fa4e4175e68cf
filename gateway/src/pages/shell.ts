import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Request, Response } from 'express';
import { escapeHtml, html, type SafeHtml } from './html.ts';
import { switchHref, type Translator } from './i18n.ts';

/** The signed-in pages' own files (no inline script or style: a strict CSP), served with a content hash. */
export const APP_ASSETS: Map<string, { body: string; type: string; etag: string }> = (() => {
  const assets = new Map<string, { body: string; type: string; etag: string }>();
  for (const [name, type] of [['inbox.js', 'text/javascript'], ['board.js', 'text/javascript'], ['app.css', 'text/css']] as const) {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return assets;
})();

export const APP_ASSET_PATH = '/app/pages/assets';

export function serveAppAsset(req: Request, res: Response): void {
  const asset = APP_ASSETS.get(String(req.params.name));
  if (!asset) {
    res.status(404).type('text').send('Not found');
    return;
  }
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', asset.etag);
  if (req.header('if-none-match') === asset.etag) {
    res.status(304).end();
    return;
  }
  res.type(asset.type).send(asset.body);
}

/** The signed-in pages, in the navigation's order. */
export const APP_PAGES = {
  approvals: '/app/approvals', dashboards: '/dashboards', crm: '/app/crm', projects: '/app/projects', keys: '/app/keys', policies: '/app/policies',
  members: '/app/members', einvoicing: '/app/einvoicing', ledger: '/app/ledger', agents: '/app/agents', marketing: '/app/marketing',
} as const;
export type AppPageKey = keyof typeof APP_PAGES;

const assetUrl = (name: string) => `${APP_ASSET_PATH}/${name}?v=${encodeURIComponent(APP_ASSETS.get(name)!.etag.replace(/"/g, ''))}`;

/**
 * A signed-in page: header with the workspace navigation, the language switch and sign-out;
 * a skip link; the served stylesheet and (optionally) script; the headers every page carries.
 */
export function sendAppPage(req: Request, res: Response, input: {
  t: Translator; status?: number; title: string; body: SafeHtml; current: AppPageKey; signOutCsrf: string;
  script?: 'inbox.js' | 'board.js'; meta?: Record<string, string>;
  /** The workspace the page is about: kept in the navigation's links. */
  ws?: string;
  /** The page frames pages of this origin (a preview served with its own sandboxing CSP). */
  frames?: boolean;
}): void {
  const { t } = input;
  res.setHeader('Content-Security-Policy', `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; ${input.frames ? "frame-src 'self'; " : ''}form-action 'self'; frame-ancestors 'none'; base-uri 'none'`);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  const q = input.ws ? `?ws=${encodeURIComponent(input.ws)}` : '';
  const nav = (key: AppPageKey) =>
    html`<li><a href="${APP_PAGES[key]}${key === 'dashboards' ? '' : q}" ${input.current === key ? html`aria-current="page"` : ''}>${t.t(`nav.${key}`)}</a></li>`;
  const meta = Object.entries(input.meta ?? {}).map(([k, v]) => html`<meta name="${k}" content="${v}">`);
  const page = html`<!doctype html>
<html lang="${t.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${input.title} · Cuadra</title><link rel="icon" href="data:,">${meta}
<link rel="stylesheet" href="${assetUrl('app.css')}">${input.script ? html`<script src="${assetUrl(input.script)}" defer></script>` : ''}</head>
<body><a class="skip" href="#main">${t.t('nav.skip')}</a>
<header class="top"><span class="brand">Cuadra</span>
<nav aria-label="${t.t('nav.label')}"><ul>${(Object.keys(APP_PAGES) as AppPageKey[]).map(nav)}</ul></nav>
<a class="lang" href="${switchHref(req, t.locale)}" lang="${t.locale === 'en' ? 'es' : 'en'}" hreflang="${t.locale === 'en' ? 'es' : 'en'}">${t.t('lang.switch')}</a>
<form method="post" action="/app/sign-out"><input type="hidden" name="csrf" value="${input.signOutCsrf}"><button type="submit" class="btn ghost">${t.t('signOut')}</button></form></header>
<main id="main" tabindex="-1">${input.body}</main>
<footer>${t.t('brand.footer')}</footer></body></html>`;
  res.status(input.status ?? 200).type('html').send(page.value);
}

export { escapeHtml };
