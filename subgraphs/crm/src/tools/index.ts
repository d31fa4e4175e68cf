import { create } from './parties/create.ts';
import { get } from './parties/get.ts';
import { list } from './parties/list.ts';

/** Every tool the crm subgraph owns. */
export const tools = [create, get, list];

/** Tool modules the crm subgraph owns (DOMAIN.md). */
export const modules = ['parties', 'deals', 'pipelines', 'crm_fields', 'tags', 'marketing', 'email', 'bookings', 'sites'] as const;
