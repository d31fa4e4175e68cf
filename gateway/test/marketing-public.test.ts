import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Redis } from 'ioredis';
import { createLogger } from '@cuadra/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { marketingPublic } from '../src/marketing-public.ts';

/** These tests forward pages; none signs a visitor in (test/marketing-site-login.test.ts does, through the real gateway). */
const noSignIn = { signIdToken: (): never => { throw new Error('no sign-in in this test'); }, siteVisitorOf: async (): Promise<null> => null, revokeIdToken: async (): Promise<boolean> => false };

/*
 * The gateway forwards the public marketing pages (`/u/…`, `/c/…`, `/s/…`) to the marketing service
 * with no credential of the visitor's. A listener on loopback stands where the marketing service
 * answers, to see exactly what the gateway sends it and to send back a header it must not pass on.
 */

let received: http.IncomingHttpHeaders[] = [];
let service: http.Server;
let gateway: http.Server;
let url: string;
let redis: Redis;

beforeAll(async () => {
  service = http.createServer((req, res) => {
    received.push(req.headers);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('set-cookie', 'cuadra_session=overwritten; Path=/');
    res.end('<p>ok</p>');
  });
  await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
  redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
  const app = express();
  app.use(marketingPublic({ marketingUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}`, log: createLogger('gateway', 'silent'), publicUrl: 'http://127.0.0.1', redis, tokens: noSignIn }));
  gateway = app.listen(0, '127.0.0.1');
  await new Promise((r) => gateway.once('listening', r));
  url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => gateway?.close(r));
  await new Promise((r) => service?.close(r));
  redis?.disconnect();
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

  it('refuses a site\'s form post with 503 when the limiter\'s Redis cannot be reached (a page for a form, the contract\'s unavailable for JSON), and the post never reaches the service', async () => {
    // A port nothing listens on: the counter cannot be taken, so the post is not let through unlimited.
    const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const app = express();
    app.use(marketingPublic({ marketingUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}`, log: createLogger('gateway', 'silent'), publicUrl: 'http://127.0.0.1', redis: dead, tokens: noSignIn }));
    const limited = app.listen(0, '127.0.0.1');
    await new Promise((r) => limited.once('listening', r));
    try {
      received = [];
      const res = await fetch(`http://127.0.0.1:${(limited.address() as AddressInfo).port}/s/panaderia/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'form=0&email=a%40b.co' });
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('No pudimos recibir tus datos');
      expect(received).toHaveLength(0);
      // A JSON post (an app revoking a visitor's token) gets the contract's answer, not a page.
      const json = await fetch(`http://127.0.0.1:${(limited.address() as AddressInfo).port}/s/panaderia/login/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'x' }) });
      expect([json.status, json.headers.get('retry-after'), ((await json.json()) as { code?: string }).code]).toEqual([503, '5', 'unavailable']);
      // Pages are still served: only posts are counted.
      expect((await fetch(`http://127.0.0.1:${(limited.address() as AddressInfo).port}/s/panaderia/`)).status).toBe(200);
    } finally {
      await new Promise((r) => limited.close(r));
      dead.disconnect();
    }
  });
});
