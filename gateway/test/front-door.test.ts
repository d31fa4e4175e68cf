import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Lexer, type Token, type Tokens } from 'marked';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/infra.ts';
import { axeProblems, openBrowser, pageWatching, SHOTS } from '../../test/helpers/browser.ts';
import { Catalog } from '../src/catalog.ts';
import { PeopleStore } from '../src/identity/people.ts';
import { startInProcessGateway, type InProcessGateway } from './helpers/gateway.ts';

// Issue 39, discovery and the front door: `/` was a JSON 404 (where a person lands after signing
// in), nothing said where the APIs are, and `npm run cuadra -- --help` printed a stack trace.

const catalog = Catalog.fromBuild();
let gw: InProcessGateway;
let browser: { context: BrowserContext; close(): Promise<void> };
const person = { email: `front.${Math.random().toString(36).slice(2, 8)}@cafe-quindio.example`, password: 'arepa con queso 2026' };

beforeAll(async () => {
  gw = await startInProcessGateway('frontdoor');
  const { workspace_id } = await gw.gateway.identity.createWorkspace({ name: 'Café del Quindío', ownerEmail: person.email });
  const people = new PeopleStore(gw.db);
  await people.init();
  const user = await people.createUser({ email: person.email, name: 'Camila', password: person.password });
  await people.setMembership(workspace_id, user._id, 'owner');
  browser = await openBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

/**
 * RFC 9264 §4.2, written here as a JSON Schema (independently of the code that makes the catalog):
 * a `linkset` member whose value is an array of link context objects (§4.2.1); a context object has
 * an optional `anchor` (a URI, §4.2.2) and, per relation type, an array of target objects; a target
 * object has `href` (a URI, §4.2.3) and target attributes — `type`, `title`, `media` strings,
 * `hreflang` an array of strings, `title*` an array of {value, language} (§4.2.4.1–2), any other
 * (extension) attribute an array (§4.2.4.3).
 */
const LINKSET_SCHEMA = {
  type: 'object', required: ['linkset'], additionalProperties: false,
  properties: {
    linkset: {
      type: 'array', minItems: 1,
      items: {
        type: 'object', minProperties: 1,
        properties: { anchor: { type: 'string', format: 'uri' } },
        additionalProperties: {
          type: 'array', minItems: 1,
          items: {
            type: 'object', required: ['href'],
            properties: {
              href: { type: 'string', format: 'uri-reference' },
              type: { type: 'string' }, title: { type: 'string' }, media: { type: 'string' },
              hreflang: { type: 'array', items: { type: 'string' } },
              'title*': { type: 'array', items: { type: 'object', required: ['value'], properties: { value: { type: 'string' }, language: { type: 'string' } } } },
            },
            additionalProperties: { type: 'array' },
          },
        },
      },
    },
  },
} as const;

describe('the API catalog (RFC 9727)', () => {
  it('GET answers a linkset (application/linkset+json with the RFC 9727 profile) that validates against RFC 9264 §4.2, linking the APIs, their descriptions, docs and status', async () => {
    const res = await fetch(`${gw.url}/.well-known/api-catalog`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"');
    expect(res.headers.get('link')).toBe('<http://127.0.0.1/.well-known/api-catalog>; rel="api-catalog"');
    const body = (await res.json()) as any;
    const ajv = new Ajv2020({ strict: true, allErrors: true, validateFormats: true });
    ajv.addFormat('uri', (s: string) => URL.canParse(s));
    ajv.addFormat('uri-reference', (s: string) => URL.canParse(s, 'http://base.example/'));
    const validate = ajv.compile(LINKSET_SCHEMA);
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    // RFC 9727 §4.1: hyperlinks to the API endpoints, and their OpenAPI description.
    const own = body.linkset.find((c: any) => c.anchor === 'http://127.0.0.1/.well-known/api-catalog');
    expect(own.item.map((i: any) => new URL(i.href).pathname).sort()).toEqual(['/graphql', '/mcp', '/v1/tools']);
    const rest = body.linkset.find((c: any) => c.anchor === 'http://127.0.0.1/v1/tools');
    expect(rest['service-desc'][0].href).toBe('http://127.0.0.1/openapi.json');
    for (const ctx of body.linkset.filter((c: any) => c !== own)) {
      expect(ctx['service-doc'][0].href, ctx.anchor).toBe('http://127.0.0.1/llms.txt');
      expect(ctx.status[0].href, ctx.anchor).toBe('http://127.0.0.1/healthz');
    }
    // Every link leads somewhere that answers (the public URL here is the test gateway's origin without its port).
    const targets = new Set<string>(body.linkset.flatMap((c: any) => Object.entries(c).filter(([k]) => k !== 'anchor' && k !== 'item').flatMap(([, v]) => (v as any[]).map((t) => t.href))));
    for (const href of targets) {
      const answer = await fetch(`${gw.url}${new URL(href).pathname}`);
      // /healthz is 503 here: no subgraph runs behind this gateway; it still answers.
      expect([200, 503], href).toContain(answer.status);
    }
  });

  it('HEAD answers the headers with the Link to the catalog and no body (RFC 9727 §2)', async () => {
    const res = await fetch(`${gw.url}/.well-known/api-catalog`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toMatch(/^<http:\/\/127\.0\.0\.1\/\.well-known\/api-catalog>; rel="api-catalog"$/);
    expect(res.headers.get('content-type')).toMatch(/^application\/linkset\+json/);
    expect(await res.text()).toBe('');
  });

  it('the OpenAPI document and the front page point to the catalog with rel="api-catalog"', async () => {
    for (const p of ['/openapi.json', '/', '/llms.txt']) {
      const res = await fetch(`${gw.url}${p}`, { redirect: 'manual' });
      expect(res.headers.get('link'), p).toBe('<http://127.0.0.1/.well-known/api-catalog>; rel="api-catalog"');
    }
  });
});

/** The tokens of a Markdown text at the top level, as marked (an independent CommonMark parser) reads it. */
const tokens = (text: string): Token[] => new Lexer().lex(text).filter((t) => t.type !== 'space');

describe('llms.txt and each tool\'s Markdown page', () => {
  it('/llms.txt has the llmstxt.org shape (H1, blockquote, text, H2 link lists) and links every tool of the catalog to its page', async () => {
    const res = await fetch(`${gw.url}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const toks = tokens(await res.text());
    expect(toks[0]).toMatchObject({ type: 'heading', depth: 1, text: 'Cuadra' });
    expect(toks[1].type).toBe('blockquote');
    // After the summary: paragraphs, then only H2 sections each followed by one list of links.
    const firstH2 = toks.findIndex((t) => t.type === 'heading' && t.depth === 2);
    expect(firstH2).toBeGreaterThan(2);
    expect(toks.slice(2, firstH2).every((t) => t.type === 'paragraph')).toBe(true);
    const linked = new Map<string, string>();
    for (let i = firstH2; i < toks.length; i += 2) {
      expect(toks[i]).toMatchObject({ type: 'heading', depth: 2 });
      const list = toks[i + 1] as Tokens.List;
      expect(list.type).toBe('list');
      for (const item of list.items) {
        const link = (item.tokens[0] as Tokens.Text).tokens?.[0] as Tokens.Link;
        expect(link.type, item.raw).toBe('link');
        linked.set(link.text, link.href);
      }
    }
    expect([...linked.keys()].filter((k) => /^[a-z_]+\.[a-z_.]+$/.test(k)).sort()).toEqual(catalog.entries.map((e) => e.name).sort());
    expect(linked.get('invoices.post')).toBe('http://127.0.0.1/docs/tools/invoices.post.md');
  });

  it('a tool\'s Markdown page says what it does and how to call it, with its schemas exactly as the catalog has them', async () => {
    for (const name of ['invoices.post', 'parties.list', 'approvals.decide']) {
      const entry = catalog.get(name)!;
      const res = await fetch(`${gw.url}/docs/tools/${name}.md`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
      const toks = tokens(await res.text());
      expect(toks[0]).toMatchObject({ type: 'heading', depth: 1, text: name });
      const codes = toks.filter((t): t is Tokens.Code => t.type === 'code' && t.lang === 'json');
      expect(JSON.parse(codes[0].text), name).toEqual(entry.input_schema);
      if (entry.output_schema) expect(JSON.parse(codes[1].text), name).toEqual(entry.output_schema);
      const facts = (toks.find((t) => t.type === 'list') as Tokens.List).items.map((i) => i.text);
      expect(facts).toContain(`REST: \`POST http://127.0.0.1/v1/tools/${name}:invoke\` with the input as the JSON body`);
      expect(facts).toContain(`Risk: \`${entry.risk}\` (${entry.annotations.readOnlyHint ? 'reads only' : 'writes'}${entry.annotations.destructiveHint ? ', destructive' : ''}${entry.annotations.idempotentHint ? ', idempotent' : ''}${entry.annotations.openWorldHint ? ', reaches outside Cuadra' : ''})`);
    }
    // An unknown tool has no page.
    expect((await fetch(`${gw.url}/docs/tools/invoices.nope.md`)).status).toBe(404);
    expect((await fetch(`${gw.url}/docs/tools/invoices.post`)).status).toBe(404);
  });
});

describe('the front page in Chromium', () => {
  it('signed out, `/` is the sign-in page in Spanish (axe-clean), with the way in for programs; signing in there lands on the workspace\'s home, and `/` then goes there too', async () => {
    const problems: string[] = [];
    const page = await pageWatching(browser.context, problems);
    const first = await page.goto(`${gw.url}/`);
    expect(first?.status()).toBe(200);
    expect(first?.headers()['content-type']).toMatch(/^text\/html/);
    expect(await page.getAttribute('html', 'lang')).toBe('es-CO');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Inicia sesión en Cuadra');
    await expect(page.getByRole('heading', { level: 2 }).textContent()).resolves.toBe('Para desarrolladores y agentes de IA');
    expect(await page.getByRole('link', { name: 'Catálogo de las API (RFC 9727)' }).getAttribute('rel')).toBe('api-catalog');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'front-door-es.png'), fullPage: true });

    // English on request, axe-clean too.
    await page.goto(`${gw.url}/?lang=en`);
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Sign in to Cuadra');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'front-door-en.png'), fullPage: true });
    await page.goto(`${gw.url}/?lang=es`);

    await page.getByLabel('Correo electrónico').fill(person.email);
    await page.getByLabel('Contraseña').fill(person.password);
    // A password is hashed with scrypt: on a loaded machine the answer can take a while.
    await page.getByRole('button', { name: 'Iniciar sesión' }).click({ timeout: 120_000 });
    await page.waitForURL('**/dashboards', { timeout: 120_000 });
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Tableros');
    await expect(page.getByRole('heading', { level: 2 }).first().textContent()).resolves.toBe('Café del Quindío');
    await page.screenshot({ path: path.join(SHOTS, 'front-door-signed-in.png'), fullPage: true });
    // Signed in, `/` is the workspace's home, never a JSON 404.
    const again = await page.goto(`${gw.url}/`);
    expect(new URL(again!.url()).pathname).toBe('/dashboards');
    expect(problems).toEqual([]);
    await page.close();
  }, 240_000);
});

describe('npm run cuadra -- --help', () => {
  /** The subcommands scripts/cuadra.ts runs, read from its dispatch (so a new one must be in the usage). */
  const commands = [...readFileSync(path.join(repoRoot, 'scripts/cuadra.ts'), 'utf8').matchAll(/command (?:!|=)== '([a-z ]+)'/g)].map((m) => m[1]);
  const cli = (...args: string[]) => spawnSync('npm', ['run', '-s', 'cuadra', '--', ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });

  it('prints the usage with every subcommand, and exits 0', () => {
    expect(new Set(commands)).toEqual(new Set(['help', 'workspace create', 'key revoke', 'mail', 'demo']));
    for (const flag of ['--help', '-h', 'help']) {
      const run = cli(flag);
      expect(run.status, flag).toBe(0);
      expect(run.stderr, flag).toBe('');
      for (const c of commands) expect(run.stdout, `${flag}: ${c}`).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
      expect(run.stdout).toMatch(/^usage: npm run cuadra -- <command> \[options\]$/m);
    }
  });

  it('an unknown command or option prints the usage on stderr and exits 2, without a stack trace', () => {
    for (const args of [['frobnicate'], ['--bogus'], [], ['mail', '--to']]) {
      const run = cli(...args);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr).toMatch(/^usage: npm run cuadra -- <command> \[options\]$/m);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
    expect(cli('frobnicate').stderr).toMatch(/^unknown command: frobnicate$/m);
  });
});
