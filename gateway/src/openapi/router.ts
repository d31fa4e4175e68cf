import { Router } from 'express';
import type { Catalog } from '../catalog.ts';
import { openApiDocument } from './document.ts';
import { apiCatalogLink } from '../discovery/linkset.ts';

/** `GET /openapi.json`: built once from the catalog the gateway serves (it changes only with a new build). */
export function openApiRouter(deps: { catalog: Catalog; publicUrl: string }): Router {
  const router = Router();
  const tools = deps.catalog.entries.map(({ subgraph: _s, max_input_bytes: _m, ...pub }) => pub);
  const body = JSON.stringify(openApiDocument(tools, deps.publicUrl));
  router.get('/openapi.json', (_req, res) => {
    // Public description: any page (API explorers, assistants' tooling) may read it.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('Link', apiCatalogLink(deps.publicUrl));
    res.type('application/json').send(body);
  });
  return router;
}
