import type { Model } from 'mongoose';
import type { Mailer } from '../mail.ts';
import { ensureModel } from '@cuadra/shared';
import { createHmac } from 'node:crypto';
import type { Logger } from '@cuadra/shared';
import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Connection } from 'mongoose';
import { PeopleStore } from '../identity/people.ts';
import { signupRouter, type AgentWorkspaceOpened } from '../identity/signup.ts';
import type { IdentityStore } from '../identity/store.ts';
import { CsrfGuard } from '../pages/html.ts';
import { MetadataDocumentClients } from './clients.ts';
import { oauthModels } from './models.ts';
import { oauthRouter } from './server.ts';
import { Throttle, throttleQuotas } from './throttle.ts';
import { AccessTokens } from './tokens.ts';

/** The people side of the gateway: OAuth server, sign-in pages, agent sign-up and claim. */
export interface PeopleAccess {
  /** Mount before the REST router. */
  router: Router;
  /** Verifies access tokens into principals (pipeline.authenticate calls it for non-`nk_` credentials). */
  tokens: AccessTokens;
  people: PeopleStore;
  close(): Promise<void>;
}

/**
 * Builds the OAuth authorization server and the sign-up/claim pages. `tokenSigningKey` signs
 * access tokens (ES256); without it the assertion key is used, told apart by `typ: at+jwt`,
 * its own `kid`, issuer and audience.
 */
export async function createPeopleAccess(deps: {
  db: Connection; redis: Redis; log: Logger; publicUrl: string; identity: IdentityStore; signingKey: string; tokenSigningKey?: string;
  quotas?: ReturnType<typeof throttleQuotas>;
  onAgentWorkspaceOpened?: (opened: AgentWorkspaceOpened) => Promise<void>;
  mailer?: Mailer | null;
}): Promise<PeopleAccess> {
  const people = new PeopleStore(deps.db);
  await people.init();
  // Unique indexes (client ids, code and token hashes) are built before the first request.
  await Promise.all(Object.values(oauthModels(deps.db)).map((m) => ensureModel(m as Model<any>)));
  const tokens = new AccessTokens({ issuer: deps.publicUrl, privateKeyPem: deps.tokenSigningKey ?? deps.signingKey, redis: deps.redis, people, roles: deps.identity.roles, db: deps.db });
  // Form tokens are HMACs under a secret derived from the gateway's key, so every gateway instance agrees.
  const csrf = new CsrfGuard(createHmac('sha256', deps.signingKey).update('cuadra sign-in pages csrf').digest(), deps.publicUrl.startsWith('https://'));
  const quotas = deps.quotas ?? throttleQuotas();
  const throttles = {
    login: new Throttle(deps.redis, 'login', quotas.login),
    loginAddress: new Throttle(deps.redis, 'login-addr', quotas.loginAddress),
    signup: new Throttle(deps.redis, 'signup', quotas.signup),
    register: new Throttle(deps.redis, 'register', quotas.register),
  };
  const metadataClients = new MetadataDocumentClients();
  const router = Router();
  router.use(oauthRouter({ db: deps.db, issuer: deps.publicUrl, identity: deps.identity, people, tokens, metadataClients, csrf, throttles, log: deps.log }));
  router.use(signupRouter({ db: deps.db, identity: deps.identity, people, csrf, publicUrl: deps.publicUrl, log: deps.log, throttles, onAgentWorkspaceOpened: deps.onAgentWorkspaceOpened, mailer: deps.mailer }));
  return { router, tokens, people, close: () => metadataClients.close() };
}
