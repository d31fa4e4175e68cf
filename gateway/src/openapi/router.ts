import { gunzipSync, gzipSync } from 'node:zlib';
import { Router } from 'express';
import type { Catalog } from '../catalog.ts';
import { openApiDocument } from './document.ts';
import { apiCatalogLink } from '../discovery/linkset.ts';

/**
 * `GET /openapi.json`: built once from the catalog the gateway serves (it changes only with a new
 * build), and kept gzipped — the document is ~3.5 MB of JSON, a string the gateway's heap held for
 * its whole life (mem13: the largest single string in its heap after the module sources); gzipped
 * it is a tenth of that. A client that accepts gzip (every browser, fetch, curl --compressed) gets
 * those bytes as they are; one that does not gets them inflated for its request.
 */
export function openApiRouter(deps: { catalog: Catalog; publicUrl: string }): Router {
  const router = Router();
  const tools = deps.catalog.entries.map(({ subgraph: _s, max_input_bytes: _m, ...pub }) => pub);
  const gzipped = gzipSync(JSON.stringify(openApiDocument(tools, deps.publicUrl)), { level: 9 });
  router.get('/openapi.json', (req, res) => {
    // Public description: any page (API explorers, assistants' tooling) may read it.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.setHeader('Link', apiCatalogLink(deps.publicUrl));
    res.setHeader('Vary', 'Accept-Encoding');
    res.type('application/json');
    if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
      res.setHeader('Content-Encoding', 'gzip');
      res.send(gzipped);
    } else res.send(gunzipSync(gzipped));
  });
  return router;
}
