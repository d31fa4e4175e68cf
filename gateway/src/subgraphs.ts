/**
 * The subgraphs the gateway composes, with the port each listens on by default
 * (`npm start` and docker-compose). `SUBGRAPH_<NAME>_URL` overrides the address at run time: one
 * URL, or several separated by commas (replicas of the subgraph, taken in turn by the forwarder).
 */
export const SUBGRAPHS = [
  { name: 'crm', port: 4101 },
  { name: 'invoices', port: 4102 },
  { name: 'payroll', port: 4103 },
  { name: 'projects', port: 4104 },
  { name: 'agents', port: 4105 },
  { name: 'marketing', port: 4106 },
  { name: 'inventory', port: 4107 },
] as const;

export type SubgraphName = (typeof SUBGRAPHS)[number]['name'];

/**
 * Every address a subgraph answers at: the replicas listed in `SUBGRAPH_<NAME>_URL` (comma-separated),
 * else its default port on loopback. Replicas share one database, so any of them may take a call.
 */
export function subgraphReplicaUrls(name: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const listed = (env[`SUBGRAPH_${name.toUpperCase()}_URL`] ?? '').split(',').map((u) => u.trim().replace(/\/+$/, '')).filter((u) => u.length > 0);
  if (listed.length > 0) return listed;
  const known = SUBGRAPHS.find((s) => s.name === name);
  if (!known) throw new Error(`Unknown subgraph ${name}`);
  return [`http://127.0.0.1:${known.port}`];
}

/**
 * One address of a subgraph (the first replica listed): enough for what reads its schema or its
 * health (composition, introspection, `/healthz`), where every replica answers the same.
 */
export function subgraphUrl(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return subgraphReplicaUrls(name, env)[0];
}
