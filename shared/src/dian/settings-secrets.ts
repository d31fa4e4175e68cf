import type { Connection } from 'mongoose';
import { CuadraError } from '../errors.ts';
import { sealerFromEnv, type Sealer } from '../seal.ts';

/**
 * The secrets a DIAN set-up holds: the software PIN (both e-invoicing and e-payroll; it enters the
 * SoftwareSecurityCode and the CUNE) and the numbering range's technical key (ClTec, e-invoicing:
 * it enters the CUFE). Declared `writeOnly` in the tools that take them, never shown.
 */
export type DianSecret = 'technical_key' | 'software_pin';

/** How people read a secret's name in a refusal. */
const SECRET_NAMES: Record<DianSecret, string> = { technical_key: 'technical key', software_pin: 'software PIN' };

/** The fields a stored set-up keeps for its secrets: `<secret>_sealed`, and the plain `<secret>` of set-ups written before sealing. */
export type SealedDianSecrets<S extends DianSecret> = { [K in S as `${K}_sealed`]?: string } & { [K in S]?: string };

/** A set-up's secrets, sealed at rest (CONTRACT.md §9) the same way in every service that keeps one. */
export interface DianSecrets<S extends DianSecret> {
  /** The sealer, or `unavailable` before any effect: without a sealing key the secrets are not kept at all. */
  requireSealer(env?: NodeJS.ProcessEnv): Sealer;
  /** The secrets sealed for storing, each to its workspace and field (a box copied elsewhere does not open). */
  seal(workspace: string, secrets: Record<S, string>, sealer: Sealer): { [K in S as `${K}_sealed`]: string };
  /** Which secrets are set (sealed or, before sealing, plain); never opens them. */
  present(doc: SealedDianSecrets<S> | null | undefined): Record<S, boolean>;
  /**
   * The stored set-up with its secrets opened and the sealed fields dropped. A secret not set, or a
   * box that does not open (the sealing key changed), is a `conflict` naming the tool that sets it:
   * a document built without it would only be refused by the authority.
   */
  open<D extends SealedDianSecrets<S> & { _id: string }>(doc: D, sealer?: Sealer | null): Omit<D, `${S}_sealed` | S> & Record<S, string>;
  /**
   * Seals the secrets of set-ups written before sealing, at start-up: one conditional update per
   * document (it applies only while the plain values are still the ones read, so a configure in
   * between wins). Without a sealing key nothing changes. The number of documents sealed.
   */
  sealPlain(db: Connection, sealer?: Sealer | null): Promise<number>;
}

/**
 * The sealing of one service's DIAN set-up: `service` names the context each box is sealed to
 * (`<service>.<secret>:<workspace>`: `einvoicing.technical_key:ws_…`, `epayroll.software_pin:ws_…`),
 * `collection` where the set-ups are stored (`_id` = workspace), `configureTool` the tool that sets them.
 */
export function dianSecrets<S extends DianSecret>(options: { service: string; label: string; secrets: readonly S[]; collection: string; configureTool: string }): DianSecrets<S> {
  const { service, label, secrets, collection, configureTool } = options;
  const context = (workspace: string, secret: S) => `${service}.${secret}:${workspace}`;
  const names = secrets.map((s) => SECRET_NAMES[s]).join(' and ');
  const requireSealer = (env: NodeJS.ProcessEnv = process.env): Sealer => {
    const sealer = sealerFromEnv(env);
    if (!sealer) throw new CuadraError('unavailable', `This server has no sealing key (CUADRA_SEAL_KEY), so the ${names} cannot be stored safely; ask the operator to set one.`, { beforeAnyEffect: true });
    return sealer;
  };
  const seal: DianSecrets<S>['seal'] = (workspace, values, sealer) =>
    Object.fromEntries(secrets.map((s) => [`${s}_sealed`, sealer.seal(values[s], context(workspace, s))])) as never;
  return {
    requireSealer,
    seal,
    present: (doc) => Object.fromEntries(secrets.map((s) => [s, Boolean((doc as Record<string, unknown> | null | undefined)?.[`${s}_sealed`] || (doc as Record<string, unknown> | null | undefined)?.[s])])) as Record<S, boolean>,
    open(doc, sealer = sealerFromEnv()) {
      const opened: Record<string, unknown> = { ...doc };
      for (const s of secrets) {
        const box = opened[`${s}_sealed`] as string | undefined;
        const plain = opened[s] as string | undefined;
        delete opened[`${s}_sealed`];
        if (box === undefined) {
          if (plain === undefined) throw new CuadraError('conflict', `The ${label} ${SECRET_NAMES[s]} is not set; run ${configureTool} with it.`);
          continue;
        }
        const value = (sealer ?? requireSealer()).open(box, context(doc._id, s));
        if (value === null) throw new CuadraError('conflict', `The stored ${SECRET_NAMES[s]} cannot be opened with this server's sealing key; run ${configureTool} again with the ${names}.`);
        opened[s] = value;
      }
      return opened as never;
    },
    async sealPlain(db, sealer = sealerFromEnv()) {
      if (!sealer) return 0;
      const coll = db.collection<{ _id: string } & Record<string, unknown>>(collection);
      let sealed = 0;
      for await (const doc of coll.find({ $or: secrets.map((s) => ({ [s]: { $exists: true } })) })) {
        const plain = Object.fromEntries(secrets.map((s) => [s, doc[s]]));
        // A set-up holding only some of its secrets in plain is left to the next configure.
        if (!secrets.every((s) => typeof plain[s] === 'string')) continue;
        const r = await coll.updateOne(
          { _id: doc._id, ...plain },
          { $set: seal(doc._id, plain as Record<S, string>, sealer), $unset: Object.fromEntries(secrets.map((s) => [s, ''])) },
        );
        sealed += r.modifiedCount;
      }
      return sealed;
    },
  };
}
