import { CONNECTION_TOKEN_HEADER, CONNECTION_TOKEN_PATH, CuadraError, toCuadraError, verifyConnectionTokenAssertion, type Logger, type PeerConfig, type Sealer } from '@cuadra/shared';
import express from 'express';
import type { Connection } from 'mongoose';
import { accessTokenOf } from './credential.ts';
import { connections } from './model.ts';

const CONNECTION_ID = /^con_[A-Za-z0-9_-]{1,64}$/;

/**
 * The service-only credential read (issue 37; shared/src/connection-token.ts): another service of
 * the deployment — today marketing, for the XOAUTH2 sign-in of an e-mail account — asks for the
 * access token of one connection of the workspace its assertion names. Not a tool and not in the
 * graph; the gateway forwards nothing here. The token is refreshed first when it is about to
 * expire (one refresh per connection, credential.ts); the answer never holds the refresh token or
 * the client secret. Each read is counted on the connection (who read it, when, how often), and
 * shown by `connections.list`.
 */
export function connectionTokenRoute(db: Connection, peers: PeerConfig | undefined, sealer: Sealer | null, log: Logger): express.Router {
  const router = express.Router();
  router.post(CONNECTION_TOKEN_PATH, express.json({ limit: '1kb' }), async (req, res) => {
    res.setHeader('cache-control', 'no-store');
    try {
      if (!peers) throw new CuadraError('unavailable', 'This service has no service key; it answers no credential read.');
      const claims = verifyConnectionTokenAssertion(req.header(CONNECTION_TOKEN_HEADER), peers.publicKey);
      const id = (req.body as { connection_id?: unknown } | undefined)?.connection_id;
      if (typeof id !== 'string' || !CONNECTION_ID.test(id)) throw new CuadraError('invalid_input', 'Send {connection_id}.', { field: '/connection_id' });
      const token = await accessTokenOf(db, claims.workspace, id, sealer);
      const now = new Date();
      await connections(db).updateOne({ _id: id, workspace: claims.workspace }, { $set: { last_used_at: now, last_used_by: `${claims.service}:${claims.purpose}` }, $inc: { uses: 1 } });
      log.info({ connection: id, workspace: claims.workspace, service: claims.service, purpose: claims.purpose }, 'connection token read');
      res.json({ kind: token.kind, access_token: token.access_token, expires_at: token.expires_at });
    } catch (err) {
      const e = toCuadraError(err);
      if (e.code === 'internal') log.error({ err }, 'connection token read failed');
      res.status(e.status).json(e.toBody());
    }
  });
  return router;
}
