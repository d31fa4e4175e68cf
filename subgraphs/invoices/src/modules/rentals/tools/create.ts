import { beginOperation, createPositioned, CuadraError, defineTool, dropOperation, newId, recordOutput, runOperation, type ToolContext } from '@cuadra/shared';
import { postableAccount } from '../../../accounting/chart.ts';
import { buyerFromCrm } from '../../items/document-lines.ts';
import { workspaceCurrency } from '../../../lib/settings.ts';
import { assets } from '../../assets/model.ts';
import { items } from '../../items/model.ts';
import { RENTAL_UNITS, RENTAL_VIEW_SCHEMA, rentals, rentalView, type RentalDoc, type RentedResource } from '../model.ts';
import { bookingOperation } from '../booking.ts';
import { claimHold, releaseHold, rentalPeriods } from '../ops.ts';

/** The input fields naming what is rented. */
export const RESOURCE_FIELDS = {
  item_id: { type: 'string', pattern: '^itm_[A-Za-z0-9_-]{1,40}$', description: 'A catalog item rented (give item_id or asset_id).' },
  asset_id: { type: 'string', pattern: '^ast_[A-Za-z0-9_-]{1,60}$', description: 'A fixed asset rented (give item_id or asset_id).' },
} as const;

/** The resource an input names, read from its own collection; a reference to nothing is `invalid_input` at its field. */
export async function resourceOf(ctx: Pick<ToolContext, 'db' | 'workspace'>, input: { item_id?: string; asset_id?: string }): Promise<RentedResource> {
  if ((input.item_id === undefined) === (input.asset_id === undefined)) throw new CuadraError('invalid_input', 'Name what is rented: item_id or asset_id, one of them.', { field: '/item_id' });
  if (input.item_id) {
    const item = await items(ctx.db).findOne({ _id: input.item_id, workspace: ctx.workspace }).lean();
    if (!item || item.status !== 'active') throw new CuadraError('invalid_input', `No active item ${input.item_id} exists in this workspace.`, { field: '/item_id' });
    return { kind: 'item', id: item._id, name: item.name };
  }
  const asset = await assets(ctx.db).findOne({ _id: input.asset_id, workspace: ctx.workspace }).lean();
  if (!asset || asset.status !== 'active') throw new CuadraError('invalid_input', `No active fixed asset ${input.asset_id} exists in this workspace.`, { field: '/asset_id' });
  return { kind: 'asset', id: asset._id, name: asset.name };
}

/** A timestamp as stored: RFC 3339 UTC with milliseconds, so holds compare as strings. */
function instant(value: string, field: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new CuadraError('invalid_input', `${value} is not a timestamp.`, { field });
  return new Date(ms).toISOString();
}

/**
 * Books a rental: the resource's hold first (no two rentals of it overlap, whatever races), then
 * the rental itself, as the durable operation {@link bookingOperation} (its marker, the rental, the
 * hold confirmed); a rental refused because the sweep withdrew its id releases its hold.
 */
export const create = defineTool({
  name: 'rentals.create',
  description: 'Rent a catalog item or a fixed asset to a customer from start to end (RFC 3339 timestamps) at a rate per hour, day or month (cents before VAT), with an optional deposit. Refused with 409 conflict when the resource is already rented over any part of that time. Hours and days are rounded up; a monthly rental ends a whole number of months after it starts and is invoiced per month.',
  risk: 'write',
  input: {
    type: 'object', additionalProperties: false, required: ['customer_id', 'start', 'end', 'unit', 'rate'],
    properties: {
      ...RESOURCE_FIELDS,
      customer_id: { type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' },
      start: { type: 'string', format: 'date-time' }, end: { type: 'string', format: 'date-time' },
      unit: { enum: RENTAL_UNITS }, rate: { type: 'integer', minimum: 1, maximum: 1e15 },
      tax_rate_ppm: { type: 'integer', minimum: 0, maximum: 1_000_000, description: 'VAT in parts per million (default 190000).' },
      deposit: { type: 'integer', minimum: 0, maximum: 1e15, description: 'Deposit in cents, received on delivery and refunded on return.' },
      deposit_account: { type: 'string', pattern: '^1[0-9]{3,9}$', description: 'Where the deposit is received and refunded (default 111005 bank).' },
      post: { type: 'boolean', description: 'Post the rental\'s invoices as they are issued (default false: drafts).' },
    },
  },
  output: recordOutput('rental', RENTAL_VIEW_SCHEMA),
  async handler(input, ctx) {
    const start = instant(input.start, '/start');
    const end = instant(input.end, '/end');
    if (end <= start) throw new CuadraError('invalid_input', 'A rental ends after it starts.', { field: '/end' });
    const periods = rentalPeriods(input.unit, start, end, input.rate);
    const resource = await resourceOf(ctx, input);
    const depositAccount = input.deposit_account ?? '111005';
    await postableAccount(ctx.db, ctx.workspace, depositAccount, '/deposit_account');
    const customer = await buyerFromCrm(ctx, input.customer_id, { field: '/customer_id' });
    const id = newId('rnt');
    const doc: RentalDoc = {
      _id: id, workspace: ctx.workspace, status: 'reserved', resource, customer_id: input.customer_id, customer, currency: await workspaceCurrency(ctx.db, ctx.workspace),
      unit: input.unit, rate: input.rate, tax_rate_ppm: input.tax_rate_ppm ?? 190000, start, end, periods, deposit: input.deposit ?? 0, deposit_account: depositAccount,
      delivery: null, return: null, post: input.post ?? false, search_lc: `${resource.name} ${customer.name}`.toLowerCase(), rev: 0, created_at: ctx.now, updated_at: ctx.now,
    };
    await claimHold(ctx, resource, id, start, end);
    // Begun once the hold is taken: a kill after it is answered from the rental if it landed, else its id is withdrawn (booking.ts).
    await beginOperation(ctx, bookingOperation, id);
    try {
      await createPositioned(rentals(ctx.db), doc);
    } catch (err) {
      // Any other failure may have stored the rental (its answer lost): the hold stays for recovery, which confirms or withdraws it.
      if ((err as { code?: number }).code !== 11000) throw err;
      // The sweep took this booking for dead (its hold unconfirmed past the repair delay) and withdrew its id (booking.ts).
      await releaseHold(ctx.db, ctx.workspace, resource, id);
      await dropOperation(ctx, bookingOperation, id);
      throw new CuadraError('conflict', `The booking of ${resource.name} took too long and its hold was released; nothing was booked. Try again.`);
    }
    await runOperation(ctx, bookingOperation, doc, id);
    return { rental: rentalView(doc) };
  },
});
