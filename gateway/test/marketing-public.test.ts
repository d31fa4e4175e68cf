import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketingPublic } from '../src/marketing-public.ts';

/*
 * The gateway forwards the public marketing pages (`/u/…`, `/c/…`, `/s/…`) to the marketing service
 * with no credential of the visitor's. A listener on loopback stands where the marketing service
 * answers, to see exactly what the gateway sends it and to send back a header it must not pass on.
 */

let received: http.IncomingHttpHeaders[] = [];
let service: http.Server;
let gateway: http.Server;
let url: string;

beforeAll(async () => {
  service = http.createServer((req, res) => {
    received.push(req.headers);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('set-cookie', 'cuadra_session=overwritten; Path=/');
    res.end('<p>ok</p>');
  });
  await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
  const app = express();
  app.use(marketingPublic({ marketingUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}`, log: createLogger('gateway', 'silent'), publicUrl: 'http://127.0.0.1' }));
  gateway = app.listen(0, '127.0.0.1');
  await new Promise((r) => gateway.once('listening', r));
  url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => gateway?.close(r));
  await new Promise((r) => service?.close(r));
});

describe('the public marketing paths', () => {
  it('forward no credential of the visitor (cookies, Authorization) and let the service set no cookie on the gateway\'s origin', async () => {
    received = [];
    const res = await fetch(`${url}/u/tok123`, { headers: { cookie: 'cuadra_session=s3cr3t; other=1', authorization: 'Bearer ck_live_secret', 'x-cuadra-client-ip': '6.6.6.6' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('<p>ok</p>');
    expect(received).toHaveLength(1);
    expect(received[0].cookie).toBeUndefined();
    expect(received[0].authorization).toBeUndefined();
    // The visitor's address is the gateway's to state, never taken from the request.
    expect(received[0]['x-cuadra-client-ip']).toBe('127.0.0.1');
    expect(res.headers.get('set-cookie')).toBeNull();
  });
});
