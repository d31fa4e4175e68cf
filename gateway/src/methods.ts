import { CuadraError, type Logger } from '@cuadra/shared';
import type { Application, NextFunction, Request, Response } from 'express';
import { match } from 'path-to-regexp';
import { sendRefusal } from './http.ts';

/** One served path: how to recognise it, and the methods its routes answer (`*`: the route answers every method itself). */
interface ServedPath {
  matches(path: string): boolean;
  methods: readonly string[];
}

/** A registered route as express's router lists it (`router.listRoutes()`, router 2.3). */
interface ListedRoute {
  path: string | RegExp;
  methods: string[] | undefined;
  router: ListingRouter | undefined;
}
interface ListingRouter {
  listRoutes(): ListedRoute[];
}

/** A matcher for `path` (a route's string pattern or RegExp) under the mount point `prefix`, as express matches it (case-insensitive, trailing slash allowed). */
function matcherOf(prefix: string, path: string | RegExp, end: boolean): (p: string) => boolean {
  const own = typeof path === 'string'
    ? ((m) => (p: string) => m(p) !== false)(match(path === '/' && !end ? '/{*rest}' : path, { end, trailing: true, sensitive: false, decode: false }))
    : (p: string) => path.test(p);
  if (prefix === '') return own;
  return (p) => p.toLowerCase().startsWith(prefix.toLowerCase()) && own(p.slice(prefix.length) || '/');
}

/**
 * Every path the app's routers serve and the methods they serve it with, read from the routers
 * themselves (`listRoutes`, recursing into mounted routers): a route added to a page is in the table by
 * being added, so no page path can answer 404 for a method it does not serve (issue 31, finding 13:
 * the hand-kept table listed POST for `/app/members` and `/app/ledger`, which no route served).
 */
export function servedPaths(app: Application): ServedPath[] {
  const out: ServedPath[] = [];
  const walk = (router: ListingRouter, prefix: string) => {
    for (const route of router.listRoutes()) {
      if (route.router) {
        if (typeof route.path !== 'string') continue; // no router here is mounted at a RegExp
        walk(route.router, route.path === '/' ? prefix : `${prefix}${route.path}`);
      } else if (route.methods && route.methods.length > 0) {
        out.push({ matches: matcherOf(prefix, route.path, true), methods: route.methods });
      }
    }
  };
  walk(app.router as unknown as ListingRouter, '');
  return out;
}

/**
 * The methods a path is served with (HEAD with GET), or null for a path no route serves — or one
 * whose route answers every method itself (`router.all`).
 */
export function allowedMethods(table: readonly ServedPath[], path: string): readonly string[] | null {
  const methods = new Set<string>();
  for (const served of table) {
    if (!served.matches(path)) continue;
    if (served.methods.includes('*')) return null;
    for (const m of served.methods) methods.add(m);
  }
  if (methods.has('GET')) methods.add('HEAD');
  return methods.size > 0 ? [...methods].sort((x, y) => rank(x) - rank(y) || x.localeCompare(y)) : null;
}

/** `Allow` lists methods in one order, whatever order the routes were added in. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const rank = (m: string) => (ORDER.includes(m) ? ORDER.indexOf(m) : ORDER.length);

/**
 * Express middleware, first in the app: 405 `method_not_allowed` with `Allow` for a served path
 * asked with a method it does not serve (CONTRACT.md §9), before any router reads the request. The
 * table is read from the app's routes at the first request (every route is mounted by then).
 */
export function methodGuard(ctx: { publicUrl: string; log: Logger }) {
  let table: ServedPath[] | undefined;
  // Every request passes here: the answer per path is kept (the invoke paths are a few hundred), so a
  // request costs one lookup, not a match against every route. Bounded: cleared past 2,000 paths.
  const known = new Map<string, readonly string[] | null>();
  return (req: Request, res: Response, next: NextFunction) => {
    table ??= servedPaths(req.app);
    let methods = known.get(req.path);
    if (methods === undefined) {
      methods = allowedMethods(table, req.path);
      if (known.size >= 2_000) known.clear();
      known.set(req.path, methods);
    }
    if (!methods) return next();
    if (methods.includes(req.method)) return next();
    res.setHeader('Allow', methods.join(', '));
    sendRefusal(res, new CuadraError('method_not_allowed', `${req.path} does not serve ${req.method}; it serves ${methods.join(', ')}.`), ctx);
  };
}
