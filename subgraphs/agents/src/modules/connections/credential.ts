import { CuadraError, withLock, type Sealer } from '@cuadra/shared';
import type { Connection } from 'mongoose';
import * as oauth from 'oauth4webapi';
import { outboundFetch } from '../../lib/outbound.ts';
import { connections, secretContext, type ConnectionDoc } from './model.ts';

/** An access token is refreshed when it has less than this left. */
const REFRESH_MARGIN_MS = 60_000;

function open(sealer: Sealer | null, box: string | null, c: Pick<ConnectionDoc, 'workspace' | '_id'>, field: string): string | null {
  if (!box) return null;
  return sealer?.open(box, secretContext(c.workspace, c._id, field)) ?? null;
}

/** An active connection's secret as it is used: the API key, or the OAuth access token and when it expires. */
export interface AccessToken { kind: ConnectionDoc['kind']; access_token: string; expires_at: string | null }

/**
 * The secret of an active connection of `workspace`, its OAuth access token refreshed first when
 * it is about to expire (RFC 6749 §6, with `oauth4webapi`). One refresh at a time per connection
 * (a lock): refresh tokens are rotated on use, and two refreshes with the same one would make the
 * provider revoke the grant. The rotated tokens are stored sealed before the new one is used.
 * A connection that does not exist is `not_found`; a revoked one `conflict`.
 */
export async function accessTokenOf(db: Connection, workspace: string, id: string, sealer: Sealer | null, now = new Date()): Promise<AccessToken> {
  let c: ConnectionDoc | null = await connections(db).findOne({ _id: id, workspace }).lean();
  if (!c) throw new CuadraError('not_found', `No connection ${id} exists in this workspace.`);
  if (c.status !== 'active') throw new CuadraError('conflict', `The connection ${id} (${c.name}) was revoked${c.revoked_at ? ` on ${new Date(c.revoked_at).toISOString()}` : ''}; nothing was sent with it. Give it a new grant (connections.create) and use that one.`);
  if (c.kind === 'oauth2' && c.oauth?.expires_at && new Date(c.oauth.expires_at).getTime() - now.getTime() < REFRESH_MARGIN_MS) {
    c = await withLock(db, `connection-refresh:${c._id}`, async (): Promise<ConnectionDoc> => {
      // Another process may have refreshed it while this one waited.
      const fresh = await connections(db).findOne({ _id: id, workspace, status: 'active' }).lean();
      if (!fresh) throw new CuadraError('conflict', `The connection ${id} was revoked.`);
      if (!fresh.oauth?.expires_at || new Date(fresh.oauth.expires_at).getTime() - Date.now() >= REFRESH_MARGIN_MS) return fresh;
      return refresh(db, fresh, sealer);
    });
  }
  const token = open(sealer, c!.secret_sealed, c!, 'secret');
  if (!token) throw new CuadraError('unavailable', 'The connection\'s secret cannot be opened here (no seal key, or another one); nothing was sent.', { beforeAnyEffect: true });
  return { kind: c!.kind, access_token: token, expires_at: c!.oauth?.expires_at ? new Date(c!.oauth.expires_at).toISOString() : null };
}

/** The `Authorization` value of an active connection ({@link accessTokenOf}). */
export async function authorizationOf(db: Connection, workspace: string, id: string, sealer: Sealer | null, now = new Date()): Promise<string> {
  return `Bearer ${(await accessTokenOf(db, workspace, id, sealer, now)).access_token}`;
}

/** Uses the refresh token once; stores the new tokens sealed. */
async function refresh(db: Connection, c: ConnectionDoc, sealer: Sealer | null): Promise<ConnectionDoc> {
  const o = c.oauth!;
  const refreshToken = open(sealer, o.refresh_token_sealed, c, 'refresh_token');
  if (!refreshToken) throw new CuadraError('conflict', 'The connection\'s access token expired and it has no refresh token; give it a new grant.');
  const clientSecret = open(sealer, o.client_secret_sealed, c, 'client_secret');
  const tokenUrl = new URL(o.token_url);
  const as: oauth.AuthorizationServer = { issuer: tokenUrl.origin, token_endpoint: tokenUrl.href };
  const client: oauth.Client = { client_id: o.client_id };
  const auth = clientSecret ? oauth.ClientSecretPost(clientSecret) : oauth.None();
  const options = { [oauth.customFetch]: outboundFetch(), [oauth.allowInsecureRequests]: tokenUrl.protocol === 'http:' };
  let tokens: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, options);
    tokens = await oauth.processRefreshTokenResponse(as, client, response);
  } catch (err) {
    const reason = String((err as { error?: string; message?: string }).error ?? (err as Error).message).slice(0, 200);
    await connections(db).updateOne({ _id: c._id }, { $set: { refresh_error: reason, updated_at: new Date() } });
    throw new CuadraError('unavailable', `The connection's token could not be refreshed (${reason}); nothing was sent.`, { beforeAnyEffect: true });
  }
  if (!sealer) throw new CuadraError('unavailable', 'No seal key: refreshed tokens cannot be kept; nothing was sent.', { beforeAnyEffect: true });
  const now = new Date();
  const set: Record<string, unknown> = {
    secret_sealed: sealer.seal(tokens.access_token, secretContext(c.workspace, c._id, 'secret')),
    'oauth.expires_at': tokens.expires_in ? new Date(now.getTime() + tokens.expires_in * 1000) : null,
    last_refreshed_at: now, refresh_error: null, updated_at: now,
  };
  if (tokens.refresh_token) set['oauth.refresh_token_sealed'] = sealer.seal(tokens.refresh_token, secretContext(c.workspace, c._id, 'refresh_token'));
  const after = await connections(db).findOneAndUpdate({ _id: c._id, status: 'active' }, { $set: set }, { returnDocument: 'after' }).lean();
  if (!after) throw new CuadraError('conflict', 'The connection was revoked while it was refreshed.');
  return after;
}
