import { gunzipSync, gzipSync } from 'node:zlib';
import { Router } from 'express';
import type { Catalog } from '../catalog.ts';
import { openApiDocument } from './document.ts';
import { apiCatalogLink } from '../discovery/linkset.ts';

/**
 * `GET /openapi.json`: built once from the catalog the gateway serves (it changes only with a new
 * build), and kept gzipped (mem13): the document is 1.8 million characters of JSON, a two-byte
 * string of 3.6 MB that the gateway's heap held for its whole life; gzipped it is 130 KB outside
 * the heap (42 ms at start). A client that accepts gzip (browsers, fetch, curl --compressed) gets
 * those bytes as they are; one that does not gets them inflated for its request.
 */
export function openApiRouter(deps: { catalog: Catalog; publicUrl: string }): Router {
  const router = Router();
  const tools = deps.catalog.entries.map(({ subgraph: _s, max_input_bytes: _m, ...pub }) => pub);
  const gzipped = gzipSync(JSON.stringify(openApiDocument(tools, deps.publicUrl)));
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
