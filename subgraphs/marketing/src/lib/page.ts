/** Escapes text for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** The CSP of the public marketing pages: nothing loads, nothing runs; forms post back here only. */
export const PUBLIC_PAGE_CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A small public page (Spanish): a title, paragraphs, and optionally one button that posts back. */
export function publicPage(opts: { title: string; paragraphs: string[]; button?: { label: string; fields?: Record<string, string> } }): string {
  const form = opts.button
    ? `<form method="post">${Object.entries(opts.button.fields ?? {}).map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('')}<button type="submit">${escapeHtml(opts.button.label)}</button></form>`
    : '';
  return `<!doctype html><html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(opts.title)}</title></head>`
    + `<body><main><h1>${escapeHtml(opts.title)}</h1>${opts.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('')}${form}</main></body></html>`;
}
