import { modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/**
 * What the workspace owes a customer: over-payments and credit notes beyond an invoice's open
 * balance. `_id` = `<workspace>|<customer>|<currency>`. Each addition names its source in `refs`
 * and is made with `{refs: {$ne: ref}}`, so a retry never adds it twice.
 */
export interface CustomerCreditDoc {
  _id: string;
  workspace: string;
  customer_id: string;
  currency: string;
  balance: number;
  refs: string[];
}

const schema = new Schema<CustomerCreditDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    customer_id: { type: String, required: true },
    currency: { type: String, required: true },
    balance: { type: Number, required: true },
    refs: { type: [String], default: [] },
  },
  { versionKey: false },
);
schema.index({ workspace: 1, customer_id: 1 });

/** The customer credits collection. */
export function customerCredits(db: Connection): Model<CustomerCreditDoc> {
  return modelOn<CustomerCreditDoc>(db, 'CustomerCredit', schema, 'customer_credits');
}

/** Adds `amount` to the customer's credit once per `ref`. */
export async function addCustomerCredit(db: Connection, workspace: string, customerId: string, currency: string, ref: string, amount: number): Promise<void> {
  if (amount <= 0) return;
  const _id = `${workspace}|${customerId}|${currency}`;
  try {
    await customerCredits(db).collection.updateOne(
      { _id, refs: { $ne: ref } } as never,
      { $inc: { balance: amount }, $addToSet: { refs: ref }, $setOnInsert: { workspace, customer_id: customerId, currency } } as never,
      { upsert: true },
    );
  } catch (err) {
    if ((err as { code?: number }).code !== 11000) throw err;
  }
}
