// Baseline (g) of the invoke bench: the floor of one Node proxy hop. A bare node:http server that
// forwards each POST body, with the caller's service-assertion header, to the crm subgraph's
// `POST /invoke` over an undici pool (as the gateway's forwarder does) and sends back the bytes it
// got, unparsed. No credential, no rate limit, no validation, no ledger: what (a) costs over (f)
// beyond this is the gateway's own work; what this costs over (f) is the hop itself on this machine.
import http from 'node:http';
import { Pool } from 'undici';

const target = new Pool(process.env.TARGET_URL!, { connections: 64, keepAliveTimeout: 30_000 });
const header = process.env.FORWARD_HEADER!;
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const forwarded = req.headers[header];
    target.request({
      path: '/invoke', method: 'POST', body: Buffer.concat(chunks),
      headers: { 'content-type': 'application/json', ...(typeof forwarded === 'string' ? { [header]: forwarded } : {}) },
    }).then(async (answer) => {
      const body = Buffer.from(await answer.body.arrayBuffer());
      res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    }, () => {
      res.writeHead(502).end();
    });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('READY\n'));
// An orderly exit on SIGTERM, so `--cpu-prof` (BENCH_PROFILE=1) writes its profile.
process.once('SIGTERM', () => process.exit(0));
