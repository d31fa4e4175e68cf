import { createHash, randomBytes, randomInt, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import {
  addPositions, assignPosition, backfillPositions, createPositioned, CuadraError, ensureModel, listNewestFirst, newId, pageNewestFirst, releasePosition, sameDigest, type ListAnswer, type Page, type Positioned,
} from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** A person who signs in with e-mail and password (pages of /oauth/authorize and /claim). */
export interface UserDoc {
  _id: string;
  /** Lower-cased; unique. */
  email: string;
  name: string;
  /** `scrypt$<log2 N>$<r>$<p>$<salt b64url>$<hash b64url>`: parameters travel with the hash so they can be raised later. */
  password_hash: string;
  created_at: Date;
  /** The language the person chose for pages and e-mails (`es-CO` when never chosen). */
  locale?: 'es-CO' | 'en';
}

/** A person's place in a workspace: which built-in or custom role they hold there. */
export interface MembershipDoc {
  _id: string;
  workspace: string;
  user: string;
  role: string;
  created_at: Date;
}

/**
 * A claim link an agent sign-up produced, or an invitation (`members.invite`): the same
 * single-use link, whose use makes the person a member with `role`. The token itself is never
 * stored, only its SHA-256. A pending invitation is the pending membership.
 */
export interface ClaimDoc {
  _id: string;
  workspace: string;
  email: string;
  /** `claim` (agent sign-up: becomes owner) or `invite`; absent on claims written before invitations. */
  kind?: 'claim' | 'invite';
  /** The role the link grants; absent = `owner` (a claim). */
  role?: string;
  /** Public id of an invitation (`ivt_…`), so it can be listed without the token's hash. */
  invitation_id?: string;
  /** Name the inviter gave, pre-filled in the form. */
  name?: string | null;
  invited_by?: string | null;
  /**
   * A claim of an agent-opened workspace also needs the one-time code e-mailed to the person
   * (CONTRACT.md §9): its SHA-256, and how many wrong codes were tried (5 lock it).
   */
  code_hash?: string | null;
  code_tries?: number;
  created_at: Date;
  expires_at: Date;
  /** Set once by a conditional update: a claim token works exactly once. */
  used_at: Date | null;
}

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: String, required: true },
    email: { type: String, required: true },
    name: { type: String, required: true },
    password_hash: { type: String, required: true },
    created_at: { type: Date, required: true },
    locale: { type: String },
  },
  { versionKey: false },
);
userSchema.index({ email: 1 }, { unique: true });

/** The series of positions members.list pages by, and that of invitations inside the claims collection. */
export const MEMBERSHIPS = 'memberships';
export const INVITATIONS = { series: 'invitations', scope: { kind: 'invite' } };

/** A member as `members.list` shows one (without its status). */
export interface MemberView { user_id: string; email: string; name: string; role: string; joined_at: string }
/** A pending invitation as `members.list` shows one (without its status). */
export interface InvitationView { invitation_id: string; email: string; name: string | null; role: string; invited_at: string; expires_at: string }

/** A page of one series with the position of the last row read, so a reader chaining series can continue below it. */
export type PositionedPage<R> = Page<R> & { last?: number };

function invitationView(d: ClaimDoc): InvitationView {
  return { invitation_id: d.invitation_id ?? '', email: d.email, name: d.name ?? null, role: d.role ?? 'owner', invited_at: d.created_at.toISOString(), expires_at: d.expires_at.toISOString() };
}

const membershipSchema = new Schema<MembershipDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    user: { type: String, required: true },
    role: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { versionKey: false },
);
membershipSchema.index({ workspace: 1, user: 1 }, { unique: true });
membershipSchema.index({ user: 1 });
// members.list pages newest first by position (CONTRACT §9 bounded lists).
addPositions(membershipSchema);

const claimSchema = new Schema<ClaimDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    email: { type: String, required: true },
    kind: { type: String, default: 'claim' },
    code_hash: { type: String, default: null },
    code_tries: { type: Number, default: 0 },
    role: { type: String, default: 'owner' },
    invitation_id: { type: String },
    name: { type: String, default: null },
    invited_by: { type: String, default: null },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, required: true },
    used_at: { type: Date, default: null },
  },
  { versionKey: false },
);
claimSchema.index({ workspace: 1, kind: 1 });
// Invitations are their own series of positions in the claims collection (members.list shows the pending ones).
addPositions(claimSchema);

function model<T>(db: Connection, name: string, schema: Schema<T>, collection: string): Model<T> {
  return (db.models[name] as Model<T> | undefined) ?? db.model<T>(name, schema, collection);
}

/** The people collections on the gateway's database. */
export function peopleModels(db: Connection) {
  return {
    users: model(db, 'User', userSchema, 'users'),
    memberships: model(db, 'Membership', membershipSchema, 'memberships'),
    claims: model(db, 'Claim', claimSchema, 'claims'),
  };
}

// scrypt at N = 2^17, r = 8, p = 1 (128 MiB, ~0.35 s here): OWASP's first-choice parameters for
// scrypt. Memory-hard, in node:crypto, so no native dependency to build on every machine.
const SCRYPT = { logN: 17, r: 8, p: 1, keylen: 32 };
const MAXMEM = 256 * 1024 * 1024;

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password.normalize('NFKC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Hashes a password with scrypt and a fresh 16-byte salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, SCRYPT.keylen, { N: 2 ** SCRYPT.logN, r: SCRYPT.r, p: SCRYPT.p, maxmem: MAXMEM });
  return `scrypt$${SCRYPT.logN}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Checks a password against a stored hash in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, logN, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, { N: 2 ** Number(logN), r: Number(r), p: Number(p), maxmem: MAXMEM });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

// Verified against when the e-mail is unknown, so a wrong e-mail costs as long as a wrong password.
let dummyHash: Promise<string> | undefined;

/** Minimum password length (CONTRACT.md §4: ≥ 12 characters). */
export const MIN_PASSWORD_LENGTH = 12;
/** How long a claim link works (CONTRACT.md §4). */
export const CLAIM_TTL_MS = 7 * 24 * 3600 * 1000;

/** Wrong e-mailed codes a claim takes before it is locked (CONTRACT.md §9). */
export const CLAIM_CODE_TRIES = 5;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Users, their memberships in workspaces, and claim links. */
export class PeopleStore {
  readonly #models: ReturnType<typeof peopleModels>;

  constructor(db: Connection) {
    this.#models = peopleModels(db);
  }

  async init(): Promise<void> {
    await Promise.all([ensureModel(this.#models.users), ensureModel(this.#models.memberships), ensureModel(this.#models.claims)]);
    await backfillPositions(this.#models.memberships);
    await backfillPositions(this.#models.claims, INVITATIONS);
  }

  /** Creates a person. Refuses a taken e-mail (`conflict`) and a short password. */
  async createUser(input: { email: string; name: string; password: string; locale?: 'es-CO' | 'en' }): Promise<UserDoc> {
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email)) throw new CuadraError('invalid_input', 'The e-mail is not valid.', { field: '/email' });
    if (input.password.length < MIN_PASSWORD_LENGTH) throw new CuadraError('invalid_input', `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`, { field: '/password' });
    const name = input.name.trim().slice(0, 200) || email;
    const doc: UserDoc = { _id: newId('usr'), email, name, password_hash: await hashPassword(input.password), created_at: new Date(), ...(input.locale ? { locale: input.locale } : {}) };
    try {
      await this.#models.users.create(doc);
    } catch (err) {
      if ((err as { code?: number }).code === 11000) throw new CuadraError('conflict', 'A person with this e-mail already has an account.');
      throw err;
    }
    return doc;
  }

  /** The person with this e-mail and password, or null. Takes as long for an unknown e-mail. */
  async checkPassword(email: string, password: string): Promise<UserDoc | null> {
    const user = await this.#models.users.findOne({ email: email.trim().toLowerCase() }).lean();
    if (!user) {
      dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
      await verifyPassword(password, await dummyHash);
      return null;
    }
    return (await verifyPassword(password, user.password_hash)) ? user : null;
  }

  async user(id: string): Promise<UserDoc | null> {
    return this.#models.users.findById(id).lean();
  }

  /** Remembers the language the person chose (pages without the cookie, and the e-mails they are sent). */
  async setLocale(user: string, locale: 'es-CO' | 'en'): Promise<void> {
    await this.#models.users.updateOne({ _id: user, locale: { $ne: locale } }, { $set: { locale } });
  }

  /** The owners of a workspace (at most `limit`), with their e-mail, name and language: whom a held call is mailed to. */
  async ownersOf(workspace: string, limit = 10): Promise<Pick<UserDoc, '_id' | 'email' | 'name' | 'locale'>[]> {
    const owners = await this.#models.memberships.find({ workspace, role: 'owner' }, { user: 1 }).limit(limit).lean();
    if (owners.length === 0) return [];
    return this.#models.users.find({ _id: { $in: owners.map((m) => m.user) } }, { email: 1, name: 1, locale: 1 }).lean();
  }

  async userByEmail(email: string): Promise<UserDoc | null> {
    return this.#models.users.findOne({ email: email.trim().toLowerCase() }).lean();
  }

  /** Gives a person a role in a workspace (replacing the role they had there). */
  async setMembership(workspace: string, user: string, role: string): Promise<void> {
    // The position is taken first and kept only if this call creates the membership.
    const position = await assignPosition(this.#models.memberships.db, MEMBERSHIPS, workspace);
    const res = await this.#models.memberships.updateOne(
      { workspace, user },
      { $set: { role }, $setOnInsert: { _id: newId('mem'), workspace, user, created_at: new Date(), ...position } },
      { upsert: true },
    ).catch(async (err: unknown) => {
      await releasePosition(this.#models.memberships.db, MEMBERSHIPS, workspace);
      throw err;
    });
    if (res.upsertedCount === 0) await releasePosition(this.#models.memberships.db, MEMBERSHIPS, workspace);
  }

  /** The person's role in the workspace, or null when they are not a member. */
  async roleIn(workspace: string, user: string): Promise<string | null> {
    const m = await this.#models.memberships.findOne({ workspace, user }, { role: 1 }).lean();
    return m?.role ?? null;
  }

  /** Every workspace the person belongs to, oldest first. */
  async memberships(user: string): Promise<Pick<MembershipDoc, 'workspace' | 'role'>[]> {
    return this.#models.memberships.find({ user }, { workspace: 1, role: 1 }).sort({ created_at: 1 }).limit(100).lean();
  }

  /** One page of the workspace's members with their people (never password hashes), newest first (bounded: positions). */
  async members(workspace: string, page: { limit: number; cursor?: string } = { limit: 100 }): Promise<ListAnswer<MemberView>> {
    const answer = await listNewestFirst<MembershipDoc, MembershipDoc>(this.#models.memberships, { workspace, limit: page.limit, cursor: page.cursor }, (m) => m);
    return { ...answer, rows: await this.#memberViews(answer.rows) };
  }

  /** One page of members by cursor (records source `members`), with the position of the last one read. */
  async memberPage(workspace: string, page: { limit: number; cursor?: string }): Promise<PositionedPage<MemberView>> {
    const found = await pageNewestFirst<MembershipDoc & Positioned>(this.#models.memberships, { workspace, limit: page.limit, cursor: page.cursor });
    return { rows: await this.#memberViews(found.rows), last: found.rows.at(-1)?.pos, ...(found.next_cursor ? { next_cursor: found.next_cursor } : {}) };
  }

  /** Memberships with their people (never password hashes). */
  async #memberViews(memberships: readonly MembershipDoc[]): Promise<MemberView[]> {
    // People by their ids: unique-key lookups.
    const users = await this.#models.users.find({ _id: { $in: memberships.map((m) => m.user) } }, { email: 1, name: 1 }).lean();
    const byId = new Map(users.map((u) => [u._id, u]));
    return memberships.map((m) => ({ user_id: m.user, email: byId.get(m.user)?.email ?? '', name: byId.get(m.user)?.name ?? '', role: m.role, joined_at: m.created_at.toISOString() }));
  }

  /** How many members of the workspace hold the role. */
  async countWithRole(workspace: string, role: string): Promise<number> {
    return this.#models.memberships.countDocuments({ workspace, role });
  }

  /** Changes a member's role; false when the person is not a member of the workspace. */
  async changeRole(workspace: string, user: string, role: string): Promise<boolean> {
    const res = await this.#models.memberships.updateOne({ workspace, user }, { $set: { role } });
    return res.matchedCount > 0;
  }

  /** Removes a person from a workspace; false when they were not a member. */
  async removeMembership(workspace: string, user: string): Promise<boolean> {
    const res = await this.#models.memberships.deleteOne({ workspace, user });
    if (res.deletedCount > 0) await releasePosition(this.#models.memberships.db, MEMBERSHIPS, workspace);
    return res.deletedCount > 0;
  }

  /** An invitation link: the token is returned once; the invitation is pending until used or expired. */
  async createInvitation(input: { workspace: string; email: string; role: string; name?: string; invitedBy: string }): Promise<{ token: string; invitation_id: string; expires_at: Date }> {
    const token = randomBytes(32).toString('base64url');
    const now = new Date();
    const doc = {
      _id: sha256(token), workspace: input.workspace, email: input.email.trim().toLowerCase(), kind: 'invite' as const, role: input.role,
      invitation_id: newId('ivt'), name: input.name ?? null, invited_by: input.invitedBy, created_at: now, expires_at: new Date(now.getTime() + CLAIM_TTL_MS), used_at: null,
    };
    await createPositioned(this.#models.claims, doc, INVITATIONS);
    return { token, invitation_id: doc.invitation_id, expires_at: doc.expires_at };
  }

  /** The workspace's invitations that can still be used (pending memberships). */
  async pendingInvitations(workspace: string, limit = 100): Promise<InvitationView[]> {
    return (await this.invitationPage(workspace, { limit })).rows;
  }

  /**
   * One page of the workspace's pending invitations by cursor, newest first, with the position of
   * the last one read (bounded; a long-expired backlog is not walked past 16 buckets).
   */
  async invitationPage(workspace: string, page: { limit: number; cursor?: string }): Promise<PositionedPage<InvitationView>> {
    const now = new Date();
    const found = await pageNewestFirst<ClaimDoc & Positioned>(this.#models.claims, {
      ...INVITATIONS, workspace, limit: page.limit, cursor: page.cursor, match: (d) => d.kind === 'invite' && d.used_at === null && d.expires_at > now,
    });
    return { rows: found.rows.map(invitationView), last: found.rows.at(-1)?.pos, ...(found.next_cursor ? { next_cursor: found.next_cursor } : {}) };
  }


  /** A new claim link for a workspace; the token is returned once and stored only as a hash. */
  /**
   * A claim of an agent-opened workspace: the link's token (given to the agent) and a one-time
   * code for the person's e-mail only (never to the agent). Both stored only as hashes.
   */
  async createClaim(workspace: string, email: string): Promise<{ token: string; code: string }> {
    const token = randomBytes(32).toString('base64url');
    const code = String(randomInt(0, 100_000_000)).padStart(8, '0');
    const now = new Date();
    await this.#models.claims.create({ _id: sha256(token), workspace, email: email.toLowerCase(), code_hash: sha256(`${token}:${code}`), code_tries: 0, created_at: now, expires_at: new Date(now.getTime() + CLAIM_TTL_MS), used_at: null });
    return { token, code };
  }

  /**
   * Checks the e-mailed code of a claim: `ok`, `wrong` (a try spent), or `locked` (5 wrong tries).
   * Each try is counted by a conditional update before the comparison, so parallel guesses cannot
   * get past the limit; the comparison is constant-time.
   */
  async checkClaimCode(token: string, code: string): Promise<'ok' | 'wrong' | 'locked'> {
    const counted = await this.#models.claims.findOneAndUpdate(
      { _id: sha256(token), used_at: null, code_tries: { $lt: CLAIM_CODE_TRIES } },
      { $inc: { code_tries: 1 } },
      { returnDocument: 'after' },
    ).lean();
    if (!counted) return 'locked';
    if (!counted.code_hash) return 'ok'; // claims written before codes existed
    if (/^\d{8}$/.test(code) && sameDigest(counted.code_hash, sha256(`${token}:${code}`))) return 'ok';
    return (counted.code_tries ?? 0) >= CLAIM_CODE_TRIES ? 'locked' : 'wrong';
  }

  /** A claim that can still be used, or null (unknown, used or expired). Does not use it. */
  async pendingClaim(token: string): Promise<ClaimDoc | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
    const hash = sha256(token);
    const claim = await this.#models.claims.findById(hash).lean();
    if (!claim || !sameDigest(claim._id, hash) || claim.used_at || claim.expires_at.getTime() <= Date.now()) return null;
    return claim;
  }

  /** Uses a claim exactly once (a conditional update); null when it was already used or has expired. */
  async useClaim(token: string): Promise<ClaimDoc | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
    return this.#models.claims.findOneAndUpdate(
      { _id: sha256(token), used_at: null, expires_at: { $gt: new Date() } },
      { $set: { used_at: new Date() } },
      { returnDocument: 'after' },
    ).lean();
  }
}

/** Hex SHA-256, for high-entropy secrets stored at rest (codes, refresh tokens, claim tokens). */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
