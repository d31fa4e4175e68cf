// `node bench/method-guard.ts`: what the 405 guard costs a request (issue 31, finding 13) — the hand-kept table it replaced,
// the table read from the routes matched route by route, and that answer kept per path (what the gateway does).
// A router shaped like the gateway's (its page, OAuth, MCP, graph and REST paths); 200,000 lookups of an invoke path.
import express from 'express';
import { allowedMethods, servedPaths } from '../gateway/src/methods.ts';
const app = express();
const r = express.Router();
for (const p of ['/app/keys', '/app/policies', '/app/members', '/app/einvoicing', '/app/ledger', '/app/approvals', '/app/approvals/lists', '/dashboards', '/dashboards/:id', '/app/sign-in', '/app/assets/:name', '/claim', '/oauth/authorize', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/v1/events', '/healthz', '/openapi.json', '/v1/tools', '/mcp', '/graphql']) r.get(p, (_q, s) => s.end());
for (const p of ['/app/keys', '/app/policies', '/app/keys/:id/revoke', '/app/policies/:id/delete', '/app/members/invite', '/app/home-dashboards', '/app/members/:id/role', '/app/members/:id/remove', '/app/approvals/:id/decide', '/app/sign-in', '/app/sign-out', '/claim', '/oauth/authorize', '/oauth/register', '/oauth/token', '/oauth/revoke', '/v1/auth/agent-signup', '/mcp', '/graphql', '/app/einvoicing']) r.post(p, (_q, s) => s.end());
app.post(/^\/v1\/tools\/[^/]+:invoke$/, (_q, s) => s.end());
app.use(r);
const table = servedPaths(app);
const OLD = [/^\/healthz$/, /^\/openapi\.json$/, /^\/v1\/tools$/, /^\/v1\/tools\/[^/]+:invoke$/, /^\/v1\/events$/, /^\/v1\/auth\/agent-signup$/, /^\/mcp$/, /^\/graphql$/, /^\/claim$/, /^\/oauth\/authorize$/, /^\/oauth\/(register|token|revoke)$/, /^\/\.well-known\/(oauth-authorization-server|oauth-protected-resource(\/mcp)?|jwks\.json)$/, /^\/app\/sign-in$/, /^\/app\/sign-out$/, /^\/app\/assets\/[^/]+$/, /^\/dashboards(\/[^/]+)?$/, /^\/app\/(keys|policies|members|einvoicing|ledger)$/, /^\/app\/keys\/[^/]+\/revoke$/, /^\/app\/policies\/[^/]+\/delete$/, /^\/app\/members\/invite$/, /^\/app\/home-dashboards$/, /^\/app\/members\/[^/]+\/(role|remove)$/];
const path = '/v1/tools/parties.create:invoke';
const N = 200_000;
const time = (label: string, f: () => unknown) => { for (let i = 0; i < 10_000; i++) f(); const t = process.hrtime.bigint(); for (let i = 0; i < N; i++) f(); console.log(label, (Number(process.hrtime.bigint() - t) / N).toFixed(0), 'ns/request'); };
time('before (hand table, find)', () => OLD.find((re) => re.test(path)));
time('after, uncached (every route)', () => allowedMethods(table, path));
const known = new Map<string, unknown>();
time('after, cached (one lookup)', () => { let m = known.get(path); if (m === undefined) { m = allowedMethods(table, path); known.set(path, m); } return m; });
console.log('routes in the table:', table.length);
