import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeThroughForms, FormAgent, formFields } from './helpers/oauth.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { startTestSystem, type TestSystem } from './helpers/system.ts';

// members.* are tools the gateway owns: invitations go through the claim link's pages, the
// member signs in to an app through /oauth/authorize and calls tools with the role given.
let sys: TestSystem;
let owner: string;
let workspace: string;
let admin: string;

beforeAll(async () => {
  sys = await startTestSystem('members');
  const ws = await sys.workspace('Miembros SAS');
  owner = ws.api_key;
  workspace = ws.workspace_id;
  admin = (await sys.key(workspace, 'admin')).api_key;
});
afterAll(async () => {
  await sys?.stop();
});

const insecure = { [oauth.allowInsecureRequests]: true };
const redirectUri = 'http://127.0.0.1:53682/cb';

/** Signs a person in to a freshly registered app through the forms; returns the app's tokens. */
async function signIn(person: { email: string; password: string }, scope: string): Promise<{ access_token: string; refresh_token?: string; client_id: string }> {
  const issuer = new URL(sys.gatewayUrl);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
  const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Caja', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }, insecure));
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: client.client_id, redirect_uri: redirectUri, scope, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' })) url.searchParams.set(k, v);
  const answer = await authorizeThroughForms(sys.gatewayUrl, url, person);
  expect(answer.status).toBe(303);
  const params = oauth.validateAuthResponse(as, client, new URL(answer.location!), oauth.expectNoState);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, insecure));
  return { access_token: tokens.access_token, refresh_token: tokens.refresh_token, client_id: client.client_id };
}

/** Opens an invitation link and submits its form as the invited person would. */
async function accept(inviteUrl: string, fields: { name?: string; password: string }) {
  const agent = new FormAgent(sys.gatewayUrl);
  const page = await agent.get(inviteUrl);
  if (page.status !== 200) return { page, done: page };
  const done = await agent.post('/claim', { ...formFields(page.text), ...fields });
  return { page, done };
}

// People are shared by every file of the system: addresses no other test uses.
const ana = { email: uniqueAddress('ana@miembros.example'), password: 'ana contraseña 2026' };
const beto = { email: uniqueAddress('beto@miembros.example'), password: 'beto contraseña 2026' };
let anaId: string;
let betoId: string;
let betoToken: { access_token: string; refresh_token?: string; client_id: string };

describe('members tools', () => {
  it('invites an owner and a member with a custom role; each sets a password at the link and joins', async () => {
    await sys.invoke('roles.create', { key: 'sales_rep', name: 'Sales rep', patterns: ['parties.%'] }, owner);

    const first = await sys.invoke('members.invite', { email: ana.email.replace('ana', 'Ana').replace('miembros', 'Miembros'), role: 'owner', name: 'Ana' }, owner);
    expect(first.status).toBe(200);
    expect(first.body.output.invite_url).toMatch(new RegExp(`^${sys.gatewayUrl}/claim\\?token=[A-Za-z0-9_-]{43}$`));
    expect(first.body.output.invitation).toMatchObject({ email: ana.email, role: 'owner', status: 'invited', invitation_id: expect.stringMatching(/^ivt_/) });
    const second = await sys.invoke('members.invite', { email: beto.email, role: 'sales_rep' }, owner);
    expect(second.status).toBe(200);

    // Pending invitations are listed (no token, no hash), and hold the role they grant.
    const pending = await sys.invoke('members.list', {}, owner);
    // Newest first: Beto was invited after Ana.
    expect(pending.body.output.rows).toEqual([
      expect.objectContaining({ email: beto.email, role: 'sales_rep', status: 'invited', user_id: null }),
      expect.objectContaining({ email: ana.email, role: 'owner', status: 'invited', user_id: null }),
    ]);
    expect(JSON.stringify(pending.body)).not.toContain(new URL(first.body.output.invite_url).searchParams.get('token'));
    expect((await sys.invoke('roles.delete', { key: 'sales_rep' }, owner)).body.code).toBe('conflict');

    const a = await accept(first.body.output.invite_url, { password: ana.password });
    expect(a.page.text).toContain('Únete a Miembros SAS');
    expect(a.page.text).toContain('owner');
    expect(a.done.status).toBe(200);
    expect(a.done.text).toContain('Bienvenido a Miembros SAS');

    const noCsrf = await new FormAgent(sys.gatewayUrl).post('/claim', { token: new URL(second.body.output.invite_url).searchParams.get('token')!, name: 'Mallory', password: 'mallory password 1' });
    expect(noCsrf.status).toBe(403);
    const short = await accept(second.body.output.invite_url, { name: 'Beto', password: 'short' });
    expect(short.done.status).toBe(400);
    const b = await accept(second.body.output.invite_url, { name: 'Beto Ruiz', password: beto.password });
    expect(b.page.text).toContain('sales_rep');
    expect(b.done.status).toBe(200);
    // Single use.
    expect((await new FormAgent(sys.gatewayUrl).get(second.body.output.invite_url)).status).toBe(400);

    const listed = await sys.invoke('members.list', {}, owner);
    const rows = listed.body.output.rows;
    // Newest first: Beto joined after Ana; the total counts members (kept on write).
    expect(rows.map((r: { email: string; role: string; status: string }) => [r.email, r.role, r.status])).toEqual([
      [beto.email, 'sales_rep', 'active'],
      [ana.email, 'owner', 'active'],
    ]);
    expect(listed.body.output.total).toBe(2);
    expect(rows[0]).toMatchObject({ name: 'Beto Ruiz', user_id: expect.stringMatching(/^usr_/) });
    expect(JSON.stringify(listed.body)).not.toMatch(/password|scrypt/);
    anaId = rows[1].user_id;
    betoId = rows[0].user_id;
    // A member's role is in use: it cannot be deleted.
    expect((await sys.invoke('roles.delete', { key: 'sales_rep' }, owner)).body.code).toBe('conflict');
  });

  it('lets the member sign in to an app and call tools with the custom role, in the gateway and the subgraph', async () => {
    betoToken = await signIn(beto, 'tools');
    const tools = await sys.fetch('/v1/tools', { key: betoToken.access_token });
    expect(tools.status).toBe(200);
    expect(tools.body.tools.length).toBeGreaterThan(0);
    expect(tools.body.tools.every((t: { name: string }) => t.name.startsWith('parties.'))).toBe(true);
    const created = await sys.invoke('parties.create', { name: 'Cliente de Beto', kind: 'customer' }, betoToken.access_token);
    expect(created.status).toBe(200);
    expect((await sys.invoke('invoices.list', {}, betoToken.access_token)).body.code).toBe('policy_denied');
    const graph = await sys.fetch('/graphql', { key: betoToken.access_token, body: { query: '{ invoices(limit: 1) { id } }' } });
    expect(graph.body.errors[0].extensions.code).toBe('policy_denied');
    // Changing the custom role counts on the member's next call.
    await sys.invoke('roles.update', { key: 'sales_rep', patterns: ['parties.%:read'] }, owner);
    expect((await sys.invoke('parties.create', { name: 'Otro', kind: 'customer' }, betoToken.access_token)).body.code).toBe('policy_denied');
    expect((await sys.invoke('parties.list', {}, betoToken.access_token)).status).toBe(200);
  });

  it('changes a member’s role, effective on the next call', async () => {
    const changed = await sys.invoke('members.change_role', { user_id: betoId, role: 'accountant' }, owner);
    expect(changed.status).toBe(200);
    expect(changed.body.output.member).toEqual({ user_id: betoId, role: 'accountant', previous_role: 'sales_rep' });
    expect((await sys.invoke('invoices.list', {}, betoToken.access_token)).status).toBe(200);
    await sys.invoke('members.change_role', { user_id: betoId, role: 'viewer' }, owner);
    expect((await sys.invoke('parties.create', { name: 'No', kind: 'customer' }, betoToken.access_token)).body.code).toBe('policy_denied');
    expect((await sys.invoke('roles.delete', { key: 'sales_rep' }, owner)).status).toBe(200);
  });

  it('refuses what a member change may not do, by code', async () => {
    // Unknown role → invalid_input at /role; unknown member → not_found.
    expect((await sys.invoke('members.change_role', { user_id: betoId, role: 'ghost' }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/role' });
    expect((await sys.invoke('members.invite', { email: 'x@miembros.example', role: 'ghost' }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/role' });
    expect((await sys.invoke('members.invite', { email: 'not-an-email', role: 'viewer' }, owner)).body).toMatchObject({ code: 'invalid_input', field: '/email' });
    expect((await sys.invoke('members.change_role', { user_id: 'usr_nobody', role: 'viewer' }, owner)).body.code).toBe('not_found');
    expect((await sys.invoke('members.remove', { user_id: 'usr_nobody' }, owner)).body.code).toBe('not_found');
    // Already a member → conflict.
    expect((await sys.invoke('members.invite', { email: ana.email, role: 'viewer' }, owner)).body.code).toBe('conflict');
    // The last owner is neither demoted nor removed.
    const demote = await sys.invoke('members.change_role', { user_id: anaId, role: 'admin' }, owner);
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe('conflict');
    expect((await sys.invoke('members.remove', { user_id: anaId }, owner)).body.code).toBe('conflict');
    // Nobody grants above their own role, nor manages someone above it.
    expect((await sys.invoke('members.change_role', { user_id: betoId, role: 'owner' }, admin)).body.code).toBe('policy_denied');
    expect((await sys.invoke('members.invite', { email: 'boss@miembros.example', role: 'owner' }, admin)).body.code).toBe('policy_denied');
    expect((await sys.invoke('members.change_role', { user_id: anaId, role: 'viewer' }, admin)).body.code).toBe('policy_denied');
    expect((await sys.invoke('members.remove', { user_id: anaId }, admin)).body.code).toBe('policy_denied');
    // A viewer reaches members.list but no change.
    const viewer = (await sys.key(workspace, 'viewer')).api_key;
    expect((await sys.invoke('members.list', {}, viewer)).status).toBe(200);
    expect((await sys.invoke('members.invite', { email: 'v@miembros.example', role: 'viewer' }, viewer)).body.code).toBe('policy_denied');
    // An admin may change a member below them.
    expect((await sys.invoke('members.change_role', { user_id: betoId, role: 'member' }, admin)).status).toBe(200);
  });

  it('refuses another workspace’s members', async () => {
    const other = await sys.workspace('Vecina Miembros SAS');
    expect((await sys.invoke('members.change_role', { user_id: betoId, role: 'viewer' }, other.api_key)).body.code).toBe('not_found');
    expect((await sys.invoke('members.remove', { user_id: betoId }, other.api_key)).body.code).toBe('not_found');
    expect((await sys.invoke('members.list', {}, other.api_key)).body.output.rows).toEqual([]);
    // Beto's token is for Miembros SAS only.
    expect((await sys.invoke('parties.list', {}, betoToken.access_token, { 'x-tenant-id': other.workspace_id })).body.code).toBe('policy_denied');
  });

  it('removes a member: their app access in the workspace ends at once', async () => {
    const removed = await sys.invoke('members.remove', { user_id: betoId }, owner);
    expect(removed.status).toBe(200);
    expect(removed.body.output).toMatchObject({ removed: true, user_id: betoId });
    expect(removed.body.output.grants_revoked).toBeGreaterThanOrEqual(1);
    expect((await sys.invoke('parties.list', {}, betoToken.access_token)).status).toBe(401);
    const refresh = await fetch(`${sys.gatewayUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: betoToken.refresh_token!, client_id: betoToken.client_id }).toString(),
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe('invalid_grant');
    const rows = (await sys.invoke('members.list', {}, owner)).body.output.rows;
    expect(rows.map((r: { email: string }) => r.email)).toEqual([ana.email]);
    expect((await sys.invoke('members.remove', { user_id: betoId }, owner)).body.code).toBe('not_found');
  });

  it('answers GET /v1/tools for a sites.login-only token with insufficient_scope and the tools:read challenge', async () => {
    const token = await signIn(ana, 'sites.login');
    const r = await sys.fetch('/v1/tools', { key: token.access_token });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('insufficient_scope');
    expect(r.headers.get('www-authenticate')).toContain('Bearer error="insufficient_scope", scope="tools:read"');
    // The owner who signed in with tools:read lists tools.
    const reader = await signIn(ana, 'tools:read');
    expect((await sys.fetch('/v1/tools', { key: reader.access_token })).status).toBe(200);
  });
});
