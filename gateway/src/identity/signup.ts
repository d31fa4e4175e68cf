import { CuadraError, type Logger } from '@cuadra/shared';
import express, { Router, type Request, type Response } from 'express';
import type { Connection } from 'mongoose';
import { sendRefusal } from '../http.ts';
import type { Throttle } from '../oauth/throttle.ts';
import { claimDonePage, claimFormPage } from '../pages/claim.ts';
import { errorPage } from '../pages/authorize.ts';
import { clientAddress, sendPage, type CsrfGuard } from '../pages/html.ts';
import { localeOf, pageChrome, translator, type Translator } from '../pages/i18n.ts';
import type { Mailer } from '../mail.ts';
import { MIN_PASSWORD_LENGTH, verifyPassword, type PeopleStore } from './people.ts';
import type { IdentityStore } from './store.ts';

/** What exists once an agent has opened a workspace (before the answer is sent). */
export interface AgentWorkspaceOpened {
  db: Connection;
  workspace_id: string;
  /** The agent's key (role `agent`, actor type `agent`). */
  key_id: string;
  agent_name: string;
  owner_email: string;
}

/**
 * HOOK POINT for the autonomy policies (issue 4): runs after an agent sign-up has created the
 * workspace and the agent's key, before the key is handed out. Here goes "create the default
 * hold policy": every non-read call made in this workspace by actor type `agent` is held (202)
 * until the owner relaxes the policies (CONTRACT.md §4). If it throws, the sign-up answers
 * `internal` and the key is never shown.
 */
export async function applyAgentWorkspaceDefaults(_opened: AgentWorkspaceOpened): Promise<void> {
  // Intentionally empty until the policy store exists.
}

const SIGNUP_FIELDS = new Set(['email', 'workspace_name', 'agent_name', 'name', 'country', 'currency', 'locale']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function textField(body: Record<string, unknown>, name: string, max: number, required: boolean): string | undefined {
  const value = body[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) {
    throw new CuadraError('invalid_input', `${name} must be a string of 1 to ${max} characters.`, { field: `/${name}` });
  }
  return value.trim();
}

/**
 * `POST /v1/auth/agent-signup` and the claim pages `GET/POST /claim` (CONTRACT.md §4): an agent
 * opens a workspace for the person it works for; the person claims it and becomes its owner.
 */
export function signupRouter(deps: {
  db: Connection; identity: IdentityStore; people: PeopleStore; csrf: CsrfGuard; publicUrl: string; log: Logger;
  throttles: { signup: Throttle; login: Throttle };
  onAgentWorkspaceOpened?: (opened: AgentWorkspaceOpened) => Promise<void>;
  /** Sends the claim code to the person; without one, nobody can claim (the code never goes to the agent). */
  mailer?: Mailer | null;
}): Router {
  const router = Router();
  const { identity, people, csrf } = deps;
  const refusalCtx = { publicUrl: deps.publicUrl, log: deps.log };
  const onOpened = deps.onAgentWorkspaceOpened ?? applyAgentWorkspaceDefaults;

  router.post('/v1/auth/agent-signup', express.json({ limit: '8kb' }), async (req, res) => {
    try {
      const wait = await deps.throttles.signup.hit(clientAddress(req));
      if (wait !== null) {
        throw new CuadraError('rate_limited', `Too many sign-ups from this address; wait ${wait} s and retry.`, { extra: { headers: { 'Retry-After': String(wait) } } });
      }
      const body = req.body as unknown;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new CuadraError('invalid_input', 'Send a JSON object.', { field: '' });
      const b = body as Record<string, unknown>;
      for (const key of Object.keys(b)) if (!SIGNUP_FIELDS.has(key)) throw new CuadraError('invalid_input', `Unknown field ${key}.`, { field: `/${key}` });
      const email = textField(b, 'email', 320, true)!.toLowerCase();
      if (!EMAIL.test(email)) throw new CuadraError('invalid_input', 'The e-mail is not valid.', { field: '/email' });
      const workspaceName = textField(b, 'workspace_name', 200, true)!;
      const agentName = textField(b, 'agent_name', 100, true)!;
      textField(b, 'name', 200, false);
      const country = textField(b, 'country', 2, false);
      if (country !== undefined && !/^[A-Za-z]{2}$/.test(country)) throw new CuadraError('invalid_input', 'country must be an ISO 3166-1 alpha-2 code.', { field: '/country' });
      // The language of the claim e-mail (and the person's pages until they choose): es-CO unless `en`.
      const locale = textField(b, 'locale', 10, false);
      if (locale !== undefined && locale !== 'es-CO' && locale !== 'en') throw new CuadraError('invalid_input', 'locale must be es-CO or en.', { field: '/locale' });
      const currency = textField(b, 'currency', 3, false);
      if (currency !== undefined && !/^[A-Za-z]{3}$/.test(currency)) throw new CuadraError('invalid_input', 'currency must be an ISO 4217 code.', { field: '/currency' });

      const opened = await identity.createWorkspace({ name: workspaceName, ownerEmail: email, country, currency, openedBy: 'agent', keyName: agentName });
      await onOpened({ db: deps.db, workspace_id: opened.workspace_id, key_id: opened.key_id, agent_name: agentName, owner_email: email });
      const { token, code } = await people.createClaim(opened.workspace_id, email);
      // The code goes only to the person's address (CONTRACT.md §9): the agent holds the link, not the proof.
      if (deps.mailer) {
        const mt = translator(locale === 'en' ? 'en' : 'es-CO');
        await deps.mailer.send({
          to: email,
          subject: mt.t('mail.claim.subject', { workspace: workspaceName }),
          text: mt.t('mail.claim.text', { agent: agentName, workspace: workspaceName, code }),
        }).catch((err: unknown) => deps.log.error({ err }, 'claim code mail failed'));
      } else {
        deps.log.warn({ workspace: opened.workspace_id }, 'no SMTP_URL: the claim code of this workspace could not be e-mailed, so it cannot be claimed');
      }
      res.status(201).setHeader('Cache-Control', 'no-store');
      res.json({ workspace_id: opened.workspace_id, api_key: opened.api_key, role: 'agent', claim_url: `${deps.publicUrl}/claim?token=${token}` });
    } catch (err) {
      sendRefusal(res, err, refusalCtx);
    }
  });

  const invalidLink = (req: Request, res: Response, t: Translator) =>
    sendPage(res, { status: 400, title: t.t('claim.invalid.title'), ...pageChrome(req, t), body: errorPage(t, t.t('claim.invalid.title'), t.t('claim.invalid.text')) });
  const failed = (req: Request, res: Response, t: Translator) =>
    sendPage(res, { status: 500, title: t.t('error.title'), ...pageChrome(req, t), body: errorPage(t, t.t('error.title'), t.t('error.retry')) });

  async function showForm(req: Request, res: Response, token: string, extra: { status?: number; error?: string; name?: string } = {}): Promise<void> {
    const t = localeOf(req, res);
    const claim = await people.pendingClaim(token);
    if (!claim) return invalidLink(req, res, t);
    const workspace = await identity.workspace(claim.workspace);
    const existing = await people.userByEmail(claim.email);
    sendPage(res, {
      status: extra.status,
      title: claim.kind === 'invite' ? t.t('claim.join.title') : t.t('claim.title'),
      ...pageChrome(req, t),
      body: claimFormPage(t, {
        token, csrf: csrf.issue(req, res, 'claim'), email: claim.email, workspaceName: workspace?.name ?? claim.workspace, hasAccount: existing !== null, error: extra.error,
        name: extra.name ?? claim.name ?? undefined, invitedAs: claim.kind === 'invite' ? claim.role : undefined,
      }),
    });
  }

  router.get('/claim', async (req, res) => {
    try {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      await showForm(req, res, token);
    } catch (err) {
      deps.log.error({ err }, 'claim page failed');
      failed(req, res, localeOf(req, res));
    }
  });

  router.post('/claim', express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 }), async (req, res) => {
    const t = localeOf(req, res);
    try {
      const body = (req.body ?? {}) as Record<string, unknown>;
      const token = typeof body.token === 'string' ? body.token : '';
      const password = typeof body.password === 'string' ? body.password.slice(0, 1024) : '';
      const name = typeof body.name === 'string' ? body.name.trim().slice(0, 200) : '';
      if (!csrf.check(req, 'claim', body.csrf)) return showForm(req, res, token, { status: 403, name, error: t.t('claim.expired') });
      const claim = await people.pendingClaim(token);
      if (!claim) return invalidLink(req, res, t);
      const wait = await deps.throttles.login.hit(`${clientAddress(req)}|claim|${claim.email}`);
      if (claim.kind !== 'invite' && wait === null) {
        // Proof that the person reads the sign-up address: the e-mailed code, counted before it is compared.
        const code = typeof body.code === 'string' ? body.code.trim() : '';
        const checked = await people.checkClaimCode(token, code);
        if (checked === 'locked') return sendPage(res, { status: 403, title: t.t('claim.locked.title'), ...pageChrome(req, t), body: errorPage(t, t.t('claim.locked.title'), t.t('claim.locked.text')) });
        if (checked === 'wrong') return showForm(req, res, token, { status: 400, name, error: t.t('claim.wrongCode') });
      }
      if (wait !== null) {
        res.setHeader('Retry-After', String(wait));
        return showForm(req, res, token, { status: 429, name, error: t.t('claim.throttled', { minutes: Math.ceil(wait / 60) }) });
      }
      const existing = await people.userByEmail(claim.email);
      if (existing) {
        if (!(await verifyPassword(password, existing.password_hash))) return showForm(req, res, token, { status: 401, name, error: t.t('claim.wrongPassword') });
      } else {
        if (!name) return showForm(req, res, token, { status: 400, name, error: t.t('claim.needName') });
        if (password.length < MIN_PASSWORD_LENGTH) return showForm(req, res, token, { status: 400, name, error: t.t('claim.shortPassword', { min: MIN_PASSWORD_LENGTH }) });
      }
      // The claim is used exactly once: a second submit (or a race) finds it used.
      const used = await people.useClaim(token);
      if (!used) return invalidLink(req, res, t);
      const user = existing ?? (await people.createUser({ email: used.email, name, password, locale: t.locale }));
      // A claim makes the owner; an invitation (members.invite) the role it was sent with.
      const invite = used.kind === 'invite';
      await people.setMembership(used.workspace, user._id, invite ? (used.role ?? 'viewer') : 'owner');
      const workspace = await identity.workspace(used.workspace);
      sendPage(res, { title: invite ? t.t('claim.joined.title') : t.t('claim.done.title'), ...pageChrome(req, t), body: claimDonePage(t, { workspaceName: workspace?.name ?? used.workspace, email: user.email, joinedAs: invite ? used.role : undefined }) });
    } catch (err) {
      deps.log.error({ err }, 'claim failed');
      failed(req, res, t);
    }
  });

  return router;
}
