import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EXTENSION_ID, getUiCapability, RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from '@modelcontextprotocol/ext-apps/server';
import type { ClientCapabilities, Resource, ReadResourceResult, Tool } from '@modelcontextprotocol/server';
import { canvasTexts } from '../canvas/pages.ts';
import { escapeHtml } from '../pages/html.ts';
import { DEFAULT_LOCALE, translator } from '../pages/i18n.ts';

/**
 * MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865, stable 2026-01-26;
 * modelcontextprotocol/ext-apps `specification/2026-01-26/apps.mdx`): Cuadra's dashboard as a
 * `ui://` resource a host renders in a sandboxed iframe, and `dashboards.render` pointing to it.
 *
 * The resource is a template ("Predeclared Resources": separate template from data): the same
 * HTML for every caller, carrying no workspace's data and no credential. The dashboard reaches it
 * from the host — the tool's arguments and result (`ui/notifications/tool-input`, `tool-result`) —
 * and every further call is a `tools/call` the host relays to this server, where the one pipeline
 * answers it with the host's own credential: workspace seal, scope, policies, approvals, ledger.
 */
export const UI_EXTENSION = EXTENSION_ID;

/** The dashboard app's URI (`ui://` scheme, "UI Resource Format"). */
export const DASHBOARD_APP_URI = 'ui://cuadra/dashboard';

/** The tool whose results the app draws ("Resource Discovery"). */
export const DASHBOARD_APP_TOOL = 'dashboards.render';

/**
 * What the view may reach outside its own document: nothing ("Empty or omitted = no external
 * connections (secure default)"). Declared explicitly so a host shows the policy it enforces.
 */
const APP_CSP = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };

const APP_META = { ui: { csp: APP_CSP, prefersBorder: true } };

/**
 * True when the client declared MCP Apps with the HTML profile ("Client<>Server Capability
 * Negotiation": `extensions["io.modelcontextprotocol/ui"].mimeTypes`).
 */
export function declaresUi(capabilities: ClientCapabilities | undefined): boolean {
  const ui = getUiCapability(capabilities);
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(RESOURCE_MIME_TYPE);
}

/** The app as `resources/list` lists it. */
export function dashboardAppResource(): Resource {
  return {
    uri: DASHBOARD_APP_URI,
    name: 'cuadra_dashboard',
    title: 'Cuadra dashboard',
    description: 'Draws a dashboards.render result: stats, charts, tables, records, agenda and actions; its calls go through the host.',
    mimeType: RESOURCE_MIME_TYPE,
    _meta: APP_META,
  };
}

/** `dashboards.render` pointing to the app (`_meta.ui.resourceUri`, and the flat key hosts of the 2025 drafts read). */
export function withDashboardApp(tool: Tool): Tool {
  if (tool.name !== DASHBOARD_APP_TOOL) return tool;
  return { ...tool, _meta: { ...tool._meta, ui: { resourceUri: DASHBOARD_APP_URI, visibility: ['model', 'app'] }, [RESOURCE_URI_META_KEY]: DASHBOARD_APP_URI } };
}

let html: string | undefined;

/** `resources/read` of the app: the HTML5 document, with the CSP it declares. */
export function readDashboardApp(): ReadResourceResult {
  html ??= dashboardAppHtml();
  return { contents: [{ uri: DASHBOARD_APP_URI, mimeType: RESOURCE_MIME_TYPE, text: html, _meta: APP_META }] };
}

function asset(name: string): string {
  const text = readFileSync(new URL(`../canvas/assets/${name}`, import.meta.url), 'utf8');
  // Inlined in the document: a closing tag inside would end the element early.
  if (/<\/(script|style)/i.test(text)) throw new Error(`${name} cannot be inlined: it contains a closing tag.`);
  return text;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The document: the dashboard page's own drawing (canvas.js, canvas.css) behind the host bridge
 * (mcp-app.js), all inline — a sandboxed view loads nothing from anywhere. Its own CSP, on top of
 * the host's, admits exactly these two scripts (by hash) and no connection, frame, font, form or
 * base URI: whatever a host grants, the view can reach no one but its host.
 */
function dashboardAppHtml(): string {
  const t = translator(DEFAULT_LOCALE);
  const bridge = asset('mcp-app.js');
  const canvas = asset('canvas.js');
  const csp = [
    "default-src 'none'", `script-src ${sha256(bridge)} ${sha256(canvas)}`, "style-src 'unsafe-inline'", 'img-src data:',
    "font-src 'none'", "connect-src 'none'", "media-src 'none'", "frame-src 'none'", "worker-src 'none'", "object-src 'none'", "base-uri 'none'", "form-action 'none'",
  ].join('; ');
  return '<!doctype html>\n'
    + `<html lang="${t.lang}"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}">`
    + '<meta name="viewport" content="width=device-width,initial-scale=1"><title>Cuadra</title>'
    + `<meta name="cuadra-locale" content="${escapeHtml(t.lang)}">`
    + `<script type="application/json" id="cuadra-text">${canvasTexts(t)}</script>`
    + `<style>${asset('canvas.css')}</style></head>`
    + '<body class="mcp-app"><p id="live-status" class="sr-only" role="status" aria-live="polite"></p>'
    + `<main id="canvas" class="grid" aria-busy="true" tabindex="-1"><p class="loading">${escapeHtml(t.t('dashboard.loading'))}</p></main>`
    + `<script>${bridge}</script><script>${canvas}</script></body></html>`;
}
