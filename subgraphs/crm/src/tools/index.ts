import { archive } from './parties/archive.ts';
import { create } from './parties/create.ts';
import { get } from './parties/get.ts';
import { list } from './parties/list.ts';
import { update } from './parties/update.ts';

/** Every tool the crm subgraph owns. */
export const tools = [create, get, list, update, archive];

/** Tool modules the crm subgraph owns (DOMAIN.md). */
export const modules = ['parties', 'deals', 'pipelines', 'crm_fields', 'tags', 'marketing', 'email', 'bookings', 'sites'] as const;
