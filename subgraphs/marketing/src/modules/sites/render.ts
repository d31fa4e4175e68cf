import { createHash } from 'node:crypto';
import type { CatalogItem } from '../../lib/catalog.ts';
import { escapeHtml } from '../../lib/page.ts';
import type { Block, SitePage } from './model.ts';

/*
 * A site's page as HTML. Every text is escaped; addresses are https only (the schema refuses others)
 * and escaped into attributes; there is no script anywhere. The Content-Security-Policy says so to the
 * browser too: nothing runs, only the page's own stylesheet (by its hash) and https images load, and
 * forms post back to this site only.
 */

/** The sites' stylesheet: small, readable, with visible focus and enough contrast. */
const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}'
  + 'header,main,footer{max-width:46rem;margin:0 auto;padding:1rem}header{border-bottom:1px solid #ccc}'
  + 'nav a{margin-right:1rem;color:#0b4f8a}img{max-width:100%;height:auto}label{display:block;margin:.5rem 0 .2rem}'
  + 'input,textarea{width:100%;padding:.4rem;border:1px solid #555;border-radius:4px;font:inherit}'
  + 'button{margin-top:1rem;padding:.5rem 1rem;background:#0b4f8a;color:#fff;border:0;border-radius:4px;font:inherit}'
  + ':focus-visible{outline:3px solid #c05600;outline-offset:2px}.consent{display:flex;gap:.5rem;align-items:flex-start}.consent input{width:auto;margin-top:.3rem}';

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/** The CSP of every site page. */
export const SITE_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/**
 * A price as a Colombian shop window writes it (es-CO: `$ 24.990`, `$ 14.691,35`). Amounts are
 * minor units; ISO 4217 gives COP two minor digits (ICU shows none), other currencies their own.
 */
export function shopPrice(minor: number, currency: string): string {
  let digits = 2;
  if (currency !== 'COP') {
    try { digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2; } catch { /* an unknown code: two */ }
  }
  const value = minor / 10 ** digits;
  try {
    return new Intl.NumberFormat('es-CO', { style: 'currency', currency, minimumFractionDigits: Number.isInteger(value) ? 0 : digits, maximumFractionDigits: digits }).format(value).replace(/\u00a0/g, ' ');
  } catch {
    return `${currency} ${value}`;
  }
}

/**
 * The catalog items a page's lists name, as finance answered them when the page was served; null
 * when finance could not be read (the lists then show only their own entries).
 */
export type PageCatalog = ReadonlyMap<string, CatalogItem> | null;

/** The ids of the catalog items the page's lists name. */
export function catalogIdsOf(page: SitePage): string[] {
  return page.blocks.flatMap((b) => (b.type === 'list' ? b.items.flatMap((e) => ('item_id' in e ? [e.item_id] : [])) : []));
}

/** A list block: its own entries, and the active catalog items it names (an archived, deleted or unreadable one is left out). */
function listBlock(b: Extract<Block, { type: 'list' }>, index: number, catalog: PageCatalog): string {
  const entries = b.items.flatMap((e) => {
    if (!('item_id' in e)) return [`<li><strong>${escapeHtml(e.title)}</strong>${e.text ? ` — ${escapeHtml(e.text)}` : ''}</li>`];
    const item = catalog?.get(e.item_id);
    return item?.status === 'active' ? [`<li><strong>${escapeHtml(item.name)}</strong> — <span class="price">${escapeHtml(shopPrice(item.priceWithTax, item.currency))}</span> <small>IVA incluido</small></li>`] : [];
  });
  if (entries.length === 0) return '';
  const list = `<ul>${entries.join('')}</ul>`;
  return b.title ? `<section aria-labelledby="b${index}-title"><h2 id="b${index}-title">${escapeHtml(b.title)}</h2>${list}</section>` : list;
}

const LABELS: Record<string, string> = { name: 'Nombre', email: 'Correo electrónico', phone: 'Teléfono', message: 'Mensaje' };

function block(b: Block, index: number, workspace: string, catalog: PageCatalog): string {
  switch (b.type) {
    case 'booking': {
      // The projects subgraph's public booking page does the booking (availability, the form, the e-mails);
      // the site links to it rather than running a second booking flow.
      const href = `/book/${encodeURIComponent(workspace)}/${encodeURIComponent(b.booking_type)}`;
      return `<section aria-labelledby="b${index}-title"><h2 id="b${index}-title">${escapeHtml(b.title ?? 'Reserva una cita')}</h2>`
        + (b.text ? `<p>${escapeHtml(b.text)}</p>` : '')
        + `<p><a href="${escapeHtml(href)}">${escapeHtml(b.submit_label ?? 'Ver horarios y reservar')}</a></p></section>`;
    }
    case 'heading': {
      // The page's title is the one h1; a heading block is h2 or h3.
      const level = Math.min(Math.max(b.level ?? 2, 2), 3);
      return `<h${level}>${escapeHtml(b.text)}</h${level}>`;
    }
    case 'text':
      return b.text.split(/\n{2,}/).map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`).join('');
    case 'image':
      return `<p><img src="${escapeHtml(b.url)}" alt="${escapeHtml(b.alt)}" loading="lazy" referrerpolicy="no-referrer"></p>`;
    case 'list':
      return listBlock(b, index, catalog);
    case 'form': {
      const id = (f: string) => `f${index}-${f}`;
      const inputs = b.fields.map((f) => f === 'message'
        ? `<label for="${id(f)}">${LABELS[f]}</label><textarea id="${id(f)}" name="${f}" rows="4" maxlength="2000"></textarea>`
        : `<label for="${id(f)}">${LABELS[f]}</label><input id="${id(f)}" name="${f}" type="${f === 'email' ? 'email' : f === 'phone' ? 'tel' : 'text'}" maxlength="200"${f === 'email' ? ' required autocomplete="email"' : f === 'name' ? ' autocomplete="name"' : ''}>`).join('');
      return `<section aria-labelledby="f${index}-title"><h2 id="f${index}-title">${escapeHtml(b.title ?? 'Escríbenos')}</h2><form method="post"><input type="hidden" name="form" value="${index}">${inputs}`
        + `<p class="consent"><input id="${id('consent')}" name="consent" type="checkbox" value="yes"><label for="${id('consent')}">${escapeHtml(b.consent_text)}</label></p>`
        + `<button type="submit">${escapeHtml(b.submit_label ?? 'Enviar')}</button></form></section>`;
    }
  }
}

/** A page of a published site, with the site's navigation; `catalog` holds the items its lists name. */
export function sitePage(site: { name: string; slug: string; workspace: string }, page: SitePage, pages: readonly SitePage[], catalog: PageCatalog = new Map()): string {
  const href = (p: string) => `/s/${site.slug}${p === '/' ? '/' : p}`;
  const nav = pages.length > 1 ? `<nav aria-label="Secciones">${pages.map((p) => `<a href="${escapeHtml(href(p.path))}"${p.path === page.path ? ' aria-current="page"' : ''}>${escapeHtml(p.title)}</a>`).join('')}</nav>` : '';
  return `<!doctype html><html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`
    + `<title>${escapeHtml(page.title)} · ${escapeHtml(site.name)}</title><style>${STYLE}</style></head>`
    + `<body><header><p><strong>${escapeHtml(site.name)}</strong></p>${nav}</header><main><h1>${escapeHtml(page.title)}</h1>${page.blocks.map((b, i) => block(b, i, site.workspace, catalog)).join('')}</main></body></html>`;
}

/** A short page of a site (thanks, not found, a refusal). */
export function siteNotice(site: { name: string } | null, title: string, text: string): string {
  return `<!doctype html><html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>`
    + `<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${site ? `<p>${escapeHtml(site.name)}</p>` : ''}</main></body></html>`;
}

/** A page of a site around markup already escaped by the caller (the visitor sign-in pages). */
export function siteShell(site: { name: string; slug: string }, title: string, bodyHtml: string): string {
  return `<!doctype html><html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)} · ${escapeHtml(site.name)}</title><style>${STYLE}</style></head>`
    + `<body><header><p><strong><a href="/s/${escapeHtml(site.slug)}/">${escapeHtml(site.name)}</a></strong></p></header><main><h1>${escapeHtml(title)}</h1>${bodyHtml}</main></body></html>`;
}
