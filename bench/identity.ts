import { connectDatabase, type Principal } from '../shared/src/index.ts';
import { Redis } from 'ioredis';
import { IdentityStore } from '../gateway/src/identity/store.ts';

/** Opens a workspace in the gateway's database; returns its owner key and the principal the gateway will assert. */
export async function startTestSystemIdentity(mongoUrl: string, redisUrl: string, dbName: string): Promise<{ workspace: string; apiKey: string; principal: Principal }> {
  const db = await connectDatabase(mongoUrl, dbName);
  const redis = new Redis(redisUrl);
  try {
    const identity = new IdentityStore(db, redis);
    await identity.init();
    const ws = await identity.createWorkspace({ name: 'Bench SAS', ownerEmail: 'bench@example.com' });
    const principal = await identity.authenticateApiKey(ws.api_key);
    return { workspace: ws.workspace_id, apiKey: ws.api_key, principal };
  } finally {
    redis.disconnect();
    await db.close();
  }
}
