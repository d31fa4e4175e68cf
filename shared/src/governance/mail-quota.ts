import { Schema, type Connection, type Model } from 'mongoose';
import { modelOn } from '../db.ts';
import { CuadraError } from '../errors.ts';
import { localDate, localDayStart } from '../periods.ts';

/*
 * The daily mail quota of a workspace (issue 31, finding 9): how many e-mails the product sends
 * for one workspace in one of its calendar days (Bogotá's for Colombian workspaces), whatever tool
 * sends them. Kept in the governance database every service shares, so one count covers every
 * sender; one counter document per workspace and day, raised by one conditional upsert (atomic:
 * of many sends at once, exactly `limit` pass). A message is counted before it leaves; one that
 * was never handed to the mail server (its send was refused before) is given back.
 */

/** Messages a workspace may send per day unless the operator sets `MAIL_DAILY_QUOTA`. */
export const DEFAULT_MAIL_DAILY_QUOTA = 500;

interface MailCountDoc { _id: string; workspace: string; day: string; sent: number }

const schema = new Schema<MailCountDoc>({ _id: String, workspace: String, day: String, sent: Number }, { versionKey: false });

function mailCounts(db: Connection): Model<MailCountDoc> {
  return modelOn<MailCountDoc>(db, 'MailCount', schema, 'mail_counts');
}

/** The quota in force: `MAIL_DAILY_QUOTA` (a positive integer), else {@link DEFAULT_MAIL_DAILY_QUOTA}. */
export function mailDailyQuota(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.MAIL_DAILY_QUOTA);
  return Number.isInteger(n) && n > 0 ? n : DEFAULT_MAIL_DAILY_QUOTA;
}

/** One workspace's e-mails per day, counted where every service can count them. */
export class MailQuota {
  readonly #db: Connection;

  constructor(db: Connection) {
    this.#db = db;
  }

  /**
   * Counts one message of `workspace` today. Refused with `rate_limited` (nothing counted) when the
   * day's quota is spent; the refusal says when the next day begins.
   */
  async take(workspace: string, now: Date, limit = mailDailyQuota()): Promise<{ day: string; sent: number }> {
    const day = localDate(now);
    const _id = `${workspace}|${day}`;
    const counts = mailCounts(this.#db);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const doc = await counts.findOneAndUpdate(
          { _id, sent: { $lt: limit } },
          { $inc: { sent: 1 }, $setOnInsert: { workspace, day } },
          { upsert: true, returnDocument: 'after' },
        ).lean();
        return { day, sent: doc!.sent };
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      // The insert collided with the day's document: spent, or made by a send at the same moment (then count again).
      const current = await counts.findById(_id).lean();
      if (current && current.sent >= limit) break;
    }
    const next = new Date(localDayStart(day));
    next.setUTCDate(next.getUTCDate() + 1);
    const hours = Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 3_600_000));
    const seconds = Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
    throw new CuadraError('rate_limited', `This workspace has sent its ${limit} e-mails for today (${day}); nothing was sent. The quota renews at ${next.toISOString()} (in about ${hours} h).`, {
      extra: { headers: { 'Retry-After': String(seconds) } },
    });
  }

  /** Gives back a message counted by {@link take} that never left. */
  async giveBack(workspace: string, day: string): Promise<void> {
    await mailCounts(this.#db).updateOne({ _id: `${workspace}|${day}`, sent: { $gt: 0 } }, { $inc: { sent: -1 } });
  }
}
