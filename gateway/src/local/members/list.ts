import { defineTool, pageOutput, PAGING_NOTE } from '@cuadra/shared';
import { ACTIVE_MEMBER_SCHEMA, INVITED_MEMBER_SCHEMA } from './schema.ts';
import { peopleServices } from '../services.ts';
import { PAGE_INPUT } from '../page.ts';

/** The people of the workspace (active and invited), with their roles; never secrets. */
export const list = defineTool({
  name: 'members.list',
  description: 'List the people of the workspace: members (status "active", with user_id, e-mail, name, role) and pending invitations (status "invited", with invitation_id and expiry). Members newest first; the pending invitations (newest first) come with the first page; total counts members.' + PAGING_NOTE,
  risk: 'read',
  input: PAGE_INPUT,
  output: pageOutput({ anyOf: [ACTIVE_MEMBER_SCHEMA, INVITED_MEMBER_SCHEMA] }),
  async handler(input, ctx) {
    const { people } = peopleServices(ctx);
    const page = await people.members(ctx.workspace, { limit: input.limit ?? 100, cursor: input.cursor });
    const members = page.rows.map((m) => ({ ...m, status: 'active' as const }));
    // The pending invitations (newest first, at most 100) come with the first page.
    const invited = input.cursor ? [] : (await people.pendingInvitations(ctx.workspace)).map((i) => ({ ...i, user_id: null, status: 'invited' as const }));
    return { rows: [...members, ...invited], ...(page.total !== undefined ? { total: page.total } : {}), ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
  },
});
