/**
 * The subgraphs the gateway composes, with the port each listens on by default
 * (`npm start` and docker-compose). `SUBGRAPH_<NAME>_URL` overrides the address at run time.
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

/** Where a subgraph answers: `SUBGRAPH_<NAME>_URL`, else its default port on loopback. */
export function subgraphUrl(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[`SUBGRAPH_${name.toUpperCase()}_URL`];
  if (fromEnv) return fromEnv.replace(/\/+$/, '');
  const known = SUBGRAPHS.find((s) => s.name === name);
  if (!known) throw new Error(`Unknown subgraph ${name}`);
  return `http://127.0.0.1:${known.port}`;
}
