import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isMetadataDocumentUrl, isPublicAddress, MetadataDocumentClients, OAuthError, parseMetadataDocument, parseRegistration, redirectUriMatches, redirectUriProblem,
} from '../src/oauth/clients.ts';

describe('redirect URIs', () => {
  it('accepts https, loopback http and reverse-domain private schemes; refuses the rest', () => {
    for (const ok of ['https://app.example/cb', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'http://localhost:3000/cb', 'com.example.app:/oauth']) expect(redirectUriProblem(ok), ok).toBeNull();
    for (const bad of ['http://app.example/cb', 'https://app.example/cb#x', 'javascript:alert(1)', 'data:text/html,hi', 'file:///etc/passwd', 'myapp:/cb', 'https://user:pw@app.example/cb', 'cb']) {
      expect(redirectUriProblem(bad), bad).not.toBeNull();
    }
  });

  it('matches exactly, except the port of a loopback http redirect', () => {
    const registered = ['https://app.example/cb', 'http://127.0.0.1:5000/cb?x=1'];
    expect(redirectUriMatches(registered, 'https://app.example/cb')).toBe(true);
    expect(redirectUriMatches(registered, 'https://app.example/cb/')).toBe(false);
    expect(redirectUriMatches(registered, 'https://app.example:8443/cb')).toBe(false);
    expect(redirectUriMatches(registered, 'https://APP.example/cb')).toBe(false);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:61234/cb?x=1')).toBe(true);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:61234/cb?x=2')).toBe(false);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:61234/other?x=1')).toBe(false);
    expect(redirectUriMatches(registered, 'http://localhost:5000/cb?x=1')).toBe(false);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:61234/cb?x=1#frag')).toBe(false);
  });

  it('parses registration metadata with RFC 7591 defaults', () => {
    expect(parseRegistration({ redirect_uris: ['https://a.example/cb'] })).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic', grant_types: ['authorization_code', 'refresh_token'], client_name: 'App at a.example',
    });
    expect(() => parseRegistration({ redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' })).toThrow(OAuthError);
    expect(() => parseRegistration({ redirect_uris: ['https://a.example/cb'], response_types: ['token'] })).toThrow(OAuthError);
  });
});

describe('client metadata documents', () => {
  it('recognises https URLs with a path as client ids', () => {
    expect(isMetadataDocumentUrl('https://app.example/oauth/client.json')).toBe(true);
    for (const no of ['https://app.example/', 'https://app.example', 'http://app.example/c.json', 'https://app.example/a/../c.json', 'https://u:p@app.example/c.json', 'https://app.example/c.json#x', 'cli_abc']) {
      expect(isMetadataDocumentUrl(no), no).toBe(false);
    }
  });

  it('judges addresses: only public unicast ones may be fetched from', () => {
    for (const pub of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111']) expect(isPublicAddress(pub), pub).toBe(true);
    for (const priv of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::10.0.0.1', 'not-an-ip']) {
      expect(isPublicAddress(priv), priv).toBe(false);
    }
  });

  it('validates the document: same client_id, listed redirect URIs, public clients only', () => {
    const id = 'https://app.example/client.json';
    expect(parseMetadataDocument(id, JSON.stringify({ client_id: id, client_name: 'App', redirect_uris: ['https://app.example/cb'] }))).toMatchObject({ client_name: 'App', kind: 'metadata_document', token_endpoint_auth_method: 'none' });
    for (const doc of [
      '{not json',
      JSON.stringify({ client_id: 'https://other.example/client.json', redirect_uris: ['https://app.example/cb'] }),
      JSON.stringify({ client_id: id }),
      JSON.stringify({ client_id: id, redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }),
      JSON.stringify({ client_id: id, redirect_uris: ['https://app.example/cb'], client_secret: 's' }),
    ]) {
      expect(() => parseMetadataDocument(id, doc), doc).toThrow(OAuthError);
    }
  });

  describe('fetching over TLS (local server, test certificate for localhost)', () => {
    const fixtures = path.join(import.meta.dirname, 'fixtures');
    const cert = readFileSync(path.join(fixtures, 'localhost-test-cert.pem'), 'utf8');
    let server: Server;
    let base: string;
    let fetched = 0;
    beforeAll(async () => {
      server = createServer({ cert, key: readFileSync(path.join(fixtures, 'localhost-test-key.pem'), 'utf8') }, (req, res) => {
        const self = `${base}${req.url}`;
        fetched++;
        if (req.url === '/ok.json') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client_id: self, client_name: 'Local App', redirect_uris: ['http://127.0.0.1/cb'] }));
        if (req.url === '/moved.json') return res.writeHead(302, { location: '/ok.json' }).end();
        if (req.url === '/big.json') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client_id: self, redirect_uris: ['http://127.0.0.1/cb'], pad: 'x'.repeat(6000) }));
        if (req.url === '/streamed.json') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`{"client_id":"${self}","redirect_uris":["http://127.0.0.1/cb"],"pad":"`);
          for (let i = 0; i < 10; i++) res.write('y'.repeat(1000));
          return res.end('"}');
        }
        res.writeHead(404).end();
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `https://localhost:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('fetches a valid document when the address is allowed', async () => {
      const clients = new MetadataDocumentClients({ allowAddress: () => true, ca: cert });
      await expect(clients.fetch(`${base}/ok.json`)).resolves.toMatchObject({ client_name: 'Local App', redirect_uris: ['http://127.0.0.1/cb'] });
      const before = fetched;
      await clients.fetch(`${base}/ok.json`);
      expect(fetched).toBe(before); // served from the 5-minute cache
      await clients.close();
    });

    it('refuses loopback at connect time, redirects, and documents over 5 KB (declared or streamed)', async () => {
      const strict = new MetadataDocumentClients({ ca: cert });
      await expect(strict.fetch(`${base}/ok.json`)).rejects.toThrow(/public/);
      await strict.close();
      const clients = new MetadataDocumentClients({ allowAddress: () => true, ca: cert });
      await expect(clients.fetch(`${base}/moved.json`)).rejects.toThrow(/302.*redirects are not followed/);
      await expect(clients.fetch(`${base}/big.json`)).rejects.toThrow(/larger than 5 KB/);
      await expect(clients.fetch(`${base}/streamed.json`)).rejects.toThrow(/larger than 5 KB/);
      await expect(clients.fetch(`${base}/missing.json`)).rejects.toThrow(/404/);
      await clients.close();
    });
  });
});
