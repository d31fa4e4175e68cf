import { Router, type NextFunction, type Request, type Response } from 'express';
import type { mcpRouter } from './router.ts';

/**
 * The `/mcp` route with the MCP server behind it loaded at the first MCP request, not at the
 * gateway's start: the SDK and what it brings (zod) were ~4 % of a gateway start's CPU, and a start
 * that serves no MCP client never needs them. The route answers the same methods as the real one
 * (GET, POST, DELETE: the method guard reads them from this route), and the real router, built once
 * with the same dependencies, serves every request. `load` (tests) stands for that import; a failed
 * load is not kept.
 */
export function lazyMcpRouter(deps: Parameters<typeof mcpRouter>[0], load: () => Promise<Router> = () => import('./router.ts').then((m) => m.mcpRouter(deps))): Router {
  let loaded: Promise<Router> | undefined;
  const serve = (req: Request, res: Response, next: NextFunction) => {
    if (!loaded) {
      // A load that failed (a file replaced mid-deploy, too many open files) fails the requests that
      // waited on it and is forgotten: the next request loads again, as Node's import() does — kept,
      // it would answer 500 to every MCP request until the gateway restarted.
      const attempt = load();
      loaded = attempt;
      attempt.catch(() => {
        if (loaded === attempt) loaded = undefined;
      });
    }
    loaded.then((router) => router(req, res, next), next);
  };
  const router = Router();
  router.route('/mcp').get(serve).post(serve).delete(serve);
  return router;
}
