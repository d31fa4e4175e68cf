import { CuadraError, type Logger } from '@cuadra/shared';
import type { NextFunction, Request, Response } from 'express';
import { sendRefusal } from './http.ts';

/**
 * Every path the gateway serves and the methods it serves them with. A request for a known path
 * with another method is answered 405 `method_not_allowed` with `Allow` (CONTRACT.md §9), before any
 * router reads it. HEAD goes with GET; OPTIONS is answered where CORS is (the OAuth endpoints).
 */
const ROUTES: readonly { path: RegExp; methods: readonly string[] }[] = [
  { path: /^\/healthz$/, methods: ['GET'] },
  { path: /^\/openapi\.json$/, methods: ['GET'] },
  { path: /^\/v1\/tools$/, methods: ['GET'] },
  { path: /^\/v1\/tools\/[^/]+:invoke$/, methods: ['POST'] },
  { path: /^\/v1\/events$/, methods: ['GET'] },
  { path: /^\/v1\/auth\/agent-signup$/, methods: ['POST'] },
  { path: /^\/mcp$/, methods: ['GET', 'POST', 'DELETE'] },
  { path: /^\/graphql$/, methods: ['GET', 'POST'] },
  { path: /^\/claim$/, methods: ['GET', 'POST'] },
  { path: /^\/oauth\/authorize$/, methods: ['GET', 'POST'] },
  { path: /^\/oauth\/(register|token|revoke)$/, methods: ['POST', 'OPTIONS'] },
  { path: /^\/\.well-known\/(oauth-authorization-server|oauth-protected-resource(\/mcp)?|jwks\.json)$/, methods: ['GET', 'OPTIONS'] },
  { path: /^\/app\/sign-in$/, methods: ['GET', 'POST'] },
  { path: /^\/app\/sign-out$/, methods: ['POST'] },
  { path: /^\/app\/assets\/[^/]+$/, methods: ['GET'] },
  { path: /^\/dashboards(\/[^/]+)?$/, methods: ['GET'] },
  { path: /^\/app\/(keys|policies|members|einvoicing|ledger)$/, methods: ['GET', 'POST'] },
  { path: /^\/app\/keys\/[^/]+\/revoke$/, methods: ['POST'] },
  { path: /^\/app\/policies\/[^/]+\/delete$/, methods: ['POST'] },
  { path: /^\/app\/members\/invite$/, methods: ['POST'] },
  { path: /^\/app\/home-dashboards$/, methods: ['POST'] },
  { path: /^\/app\/members\/[^/]+\/(role|remove)$/, methods: ['POST'] },
];

/** The methods a path is served with, or null for a path the gateway does not serve. */
export function allowedMethods(path: string): readonly string[] | null {
  return ROUTES.find((r) => r.path.test(path))?.methods ?? null;
}

/** Express middleware: 405 with `Allow` for a known path asked with a method it does not serve. */
export function methodGuard(ctx: { publicUrl: string; log: Logger }) {
  return (req: Request, res: Response, next: NextFunction) => {
    const methods = allowedMethods(req.path);
    if (!methods) return next();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    if (methods.includes(method)) return next();
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : [...methods];
    res.setHeader('Allow', allow.join(', '));
    sendRefusal(res, new CuadraError('method_not_allowed', `${req.path} does not serve ${req.method}; it serves ${allow.join(', ')}.`), ctx);
  };
}
