import { Router, type Response } from 'express';
import type { Catalog } from '../catalog.ts';
import { API_CATALOG_PATH, API_CATALOG_TYPE, apiCatalog, apiCatalogLink } from './linkset.ts';
import { llmsTxt, toolDocPath, toolMarkdown } from './markdown.ts';

/** Public descriptions: any page or program may read them, cached briefly (they change with a build). */
function publicHeaders(res: Response, link: string): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Cache-Control', 'public, max-age=300');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Link', link);
}

/**
 * Discovery: `GET|HEAD /.well-known/api-catalog` (RFC 9727), `/llms.txt` (llmstxt.org) and each
 * tool's Markdown page. Every answer carries `Link: <…/.well-known/api-catalog>; rel="api-catalog"`
 * (RFC 9727 §2 asks it of the HEAD answer). Built from the catalog the gateway serves: the catalog
 * and llms.txt once, a tool's page at each request for it.
 */
export function discoveryRouter(deps: { catalog: Catalog; publicUrl: string }): Router {
  const router = Router();
  const tools = deps.catalog.entries.map(({ subgraph: _s, max_input_bytes: _m, ...pub }) => pub);
  const link = apiCatalogLink(deps.publicUrl);
  const catalogBody = JSON.stringify(apiCatalog(deps.publicUrl));
  const llms = llmsTxt(tools, deps.publicUrl);
  // Each tool's page written when asked for, not kept: the 317 pages were 3.4 MB of strings the gateway's heap held
  // for its whole life (mem13), for pages a reader fetches now and then; writing one takes a fraction of a millisecond.
  const toolsByPage = new Map(tools.map((t) => [toolDocPath(t.name), t]));

  // express answers HEAD with the GET route's headers and no body, as RFC 9110 §9.3.2 asks.
  router.get(API_CATALOG_PATH, (_req, res) => {
    publicHeaders(res, link);
    res.setHeader('Content-Type', API_CATALOG_TYPE);
    // A Buffer, so express adds no charset parameter to a JSON media type.
    res.send(Buffer.from(catalogBody));
  });
  router.get('/llms.txt', (_req, res) => {
    publicHeaders(res, link);
    res.setHeader('Content-Type', 'text/markdown; charset=utf-8');
    res.send(llms);
  });
  router.get('/docs/tools/:page', (req, res, next) => {
    const tool = toolsByPage.get(req.path);
    if (!tool) return next();
    publicHeaders(res, link);
    res.setHeader('Content-Type', 'text/markdown; charset=utf-8');
    res.send(toolMarkdown(tool, deps.publicUrl));
  });
  return router;
}
