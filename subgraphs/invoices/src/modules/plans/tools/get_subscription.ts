import { defineTool, ID_INPUT, recordOutput } from '@cuadra/shared';
import { documentToday } from '../../../lib/document-dates.ts';
import { findSubscription, SUBSCRIPTION_VIEW_SCHEMA, subscriptionView } from '../model.ts';

/** Reads one subscription. */
export const getSubscription = defineTool({
  name: 'plans.get_subscription',
  description: 'Get one plan subscription by id: its plan, customer, status (trialing, active, cancelling, cancelled), billing schedule, setup invoice and its plan changes with their proration.',
  risk: 'read',
  input: ID_INPUT,
  output: recordOutput('subscription', SUBSCRIPTION_VIEW_SCHEMA),
  async handler(input, ctx) {
    return { subscription: subscriptionView(await findSubscription(ctx, input.id), documentToday(ctx)) };
  },
});
