import type { Connection } from 'mongoose';
import { oauthModels } from './models.ts';
import type { AccessTokens } from './tokens.ts';

/**
 * Revokes every OAuth grant a person gave in one workspace (`members.remove`): refresh tokens
 * stop working and the grants' access tokens are refused at once on every gateway.
 */
export async function revokeMemberGrants(db: Connection, tokens: Pick<AccessTokens, 'revokeGrantTokens'>, workspace: string, user: string): Promise<number> {
  const models = oauthModels(db);
  const grants = await models.grants.find({ workspace, user, revoked_at: null }, { _id: 1 }).limit(10_000).lean();
  for (const { _id } of grants) {
    await models.grants.updateOne({ _id, revoked_at: null }, { $set: { revoked_at: new Date(), revoked_reason: 'member removed from the workspace' } });
    await models.refreshTokens.updateMany({ grant: _id, used_at: null }, { $set: { used_at: new Date() } });
    await tokens.revokeGrantTokens(_id);
  }
  return grants.length;
}
