import { addPositions, modelOn } from '@cuadra/shared';
import { Schema, type Connection, type Model } from 'mongoose';

/** A workspace (tenant). Everything any service stores carries its id. */
export interface WorkspaceDoc {
  _id: string;
  name: string;
  /** ISO 3166-1 alpha-2; drives tax and payroll rules. */
  country: string;
  /** Base currency (ISO 4217). */
  currency: string;
  owner_email: string;
  /** Who opened it: an operator (admin command), a person, or an agent (agent sign-up). */
  opened_by: 'operator' | 'person' | 'agent';
  created_at: Date;
  /** The API version (`Cuadra-Version`) the workspace started on and is answered as; absent: the first (it predates versions). */
  api_version?: string;
  /** Its public name in URLs (`/book/<slug>/…`): unique, chosen or derived from the name when opened; given to older workspaces at start-up. */
  slug?: string;
}

/** An API key, stored only as the SHA-256 of its value. */
export interface ApiKeyDoc {
  _id: string;
  workspace: string;
  name: string;
  role: string;
  /** Tool patterns narrowing the key (`invoices.%`, `%:read`); empty = the whole role. */
  patterns: string[];
  /** Hex SHA-256 of the key; the key itself is never stored. */
  hash: string;
  /** First characters of the key, so a person can recognise it in a list. */
  prefix: string;
  /** Whether calls made with it are an agent's or a program's (policies select on this). */
  actor_type: 'api_key' | 'agent';
  /** The person (user id) who created it through `api_keys.create`; the key acts as them for "nobody decides their own request". */
  created_by_person?: string | null;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
}

const workspaceSchema = new Schema<WorkspaceDoc>(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    country: { type: String, required: true },
    currency: { type: String, required: true },
    owner_email: { type: String, required: true },
    opened_by: { type: String, required: true },
    created_at: { type: Date, required: true },
    api_version: { type: String },
    slug: { type: String },
  },
  { versionKey: false },
);
workspaceSchema.index({ slug: 1 }, { unique: true, sparse: true });

const apiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: { type: String, required: true },
    workspace: { type: String, required: true },
    name: { type: String, required: true },
    role: { type: String, required: true },
    patterns: { type: [String], default: [] },
    hash: { type: String, required: true },
    prefix: { type: String, required: true },
    actor_type: { type: String, required: true },
    created_by_person: { type: String, default: null },
    created_at: { type: Date, required: true },
    expires_at: { type: Date, default: null },
    revoked_at: { type: Date, default: null },
  },
  { versionKey: false },
);
apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ workspace: 1, created_at: -1 });
// api_keys.list pages newest first by position (CONTRACT §9 bounded lists).
addPositions(apiKeySchema);

/** The identity collections on the gateway's own database. */
export function identityModels(db: Connection): { workspaces: Model<WorkspaceDoc>; apiKeys: Model<ApiKeyDoc> } {
  return {
    workspaces: modelOn<WorkspaceDoc>(db, 'Workspace', workspaceSchema, 'workspaces'),
    apiKeys: modelOn<ApiKeyDoc>(db, 'ApiKey', apiKeySchema, 'api_keys'),
  };
}
