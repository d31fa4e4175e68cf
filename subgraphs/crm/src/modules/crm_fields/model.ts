import { createAjv, CuadraError, DATE_SCHEMA, DATE_TIME_SCHEMA, modelOn, newId, pointerOf, TEXT_SCHEMA as TEXT } from '@cuadra/shared';
import type { ValidateFunction } from 'ajv';
import { Schema, type Connection, type Model } from 'mongoose';
import { changeSet, readSet } from '../../lib/workspace-set.ts';

export const FIELD_TYPES = ['text', 'number', 'money', 'date', 'select', 'multiselect', 'boolean', 'member', 'party'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export type FieldEntity = 'deal' | 'party';

/** A custom field of deals or parties. */
export interface CustomField {
  id: string;
  entity: FieldEntity;
  /** The property name values are stored under (`custom.<key>`), fixed once made. */
  key: string;
  label: string;
  type: FieldType;
  /** The choices of a select or multiselect. */
  options: string[];
  /** A new record must give it (changes to existing records are not forced to). */
  required: boolean;
  /** Archived fields keep their stored values and stay readable; new values are refused. */
  status: 'active' | 'archived';
  created_at: Date;
  updated_at: Date;
}

/** A workspace's custom fields, one document (`_id` = workspace): at most {@link MAX_FIELDS}; `version` names the schema they make. */
export interface FieldSetDoc {
  _id: string;
  workspace: string;
  version: number;
  fields: CustomField[];
}

export const MAX_FIELDS = 200;

const schema = new Schema<FieldSetDoc>(
  { _id: { type: String, required: true }, workspace: { type: String, required: true }, version: { type: Number, required: true }, fields: { type: Schema.Types.Mixed, default: [] } },
  { versionKey: false, minimize: false },
);

/** The custom fields collection (one document per workspace). */
export function fieldSets(db: Connection): Model<FieldSetDoc> {
  return modelOn<FieldSetDoc>(db, 'CrmFieldSet', schema, 'crm_fields');
}

export function readFields(db: Connection, workspace: string): Promise<FieldSetDoc> {
  return readSet(fieldSets(db), workspace, () => ({ _id: workspace, workspace, version: 0, fields: [] }));
}

/** Changes the workspace's fields by one conditional write on the set's version ({@link changeSet}). */
export function changeFields<T>(db: Connection, workspace: string, change: (set: FieldSetDoc) => T): Promise<{ set: FieldSetDoc; result: T }> {
  return changeSet(fieldSets(db), workspace, () => ({ _id: workspace, workspace, version: 0, fields: [] }), ['fields'], 'custom fields', change);
}

/** The JSON Schema of one field's value. */
export function valueSchema(f: Pick<CustomField, 'type' | 'options' | 'label'>): Record<string, unknown> {
  const described = (s: Record<string, unknown>) => ({ ...s, description: f.label });
  switch (f.type) {
    case 'text': return described({ type: 'string', maxLength: 2000 });
    case 'number': return described({ type: 'number', minimum: -1e15, maximum: 1e15 });
    case 'money': return described({ type: 'integer', minimum: -1e15, maximum: 1e15 });
    case 'date': return described(DATE_SCHEMA);
    case 'select': return described({ enum: f.options });
    case 'multiselect': return described({ type: 'array', maxItems: f.options.length, uniqueItems: true, items: { enum: f.options } });
    case 'boolean': return described({ type: 'boolean' });
    case 'member': return described({ type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' });
    case 'party': return described({ type: 'string', pattern: '^pty_[A-Za-z0-9_-]{1,40}$' });
  }
}

/**
 * The JSON Schema a workspace's fields make for one entity: `custom` is an object of the active
 * fields' values (`null` clears one); anything else — an unknown key, an archived field's new
 * value — is refused at its own pointer.
 */
export function customSchema(set: Pick<FieldSetDoc, 'fields'>, entity: FieldEntity, creating: boolean): Record<string, unknown> {
  const active = set.fields.filter((f) => f.entity === entity && f.status === 'active');
  const custom: Record<string, unknown> = {
    type: 'object', additionalProperties: false,
    properties: Object.fromEntries(active.map((f) => [f.key, creating ? valueSchema(f) : { anyOf: [valueSchema(f), { type: 'null' }] }])),
  };
  const required = creating ? active.filter((f) => f.required).map((f) => f.key) : [];
  if (required.length) custom.required = required;
  return { type: 'object', properties: { custom }, ...(required.length ? { required: ['custom'] } : {}) };
}

const ajv = createAjv();
/** Compiled validators by workspace, entity, create/update and schema version: compiled once per version. */
const compiled = new Map<string, ValidateFunction>();

/**
 * Checks `custom` values against the workspace's fields (ajv, the validator compiled once per
 * version of the field set and kept); a refusal names the value's pointer (`/custom/budget`).
 */
export function checkCustom(set: FieldSetDoc, entity: FieldEntity, custom: Record<string, unknown> | undefined, creating: boolean): void {
  const id = `${set.workspace}|${entity}|${creating ? 'c' : 'u'}|${set.version}`;
  let validate = compiled.get(id);
  if (!validate) {
    if (compiled.size > 5_000) compiled.clear();
    validate = ajv.compile(customSchema(set, entity, creating));
    compiled.set(id, validate);
  }
  const value = custom === undefined ? {} : { custom };
  if (!validate(value)) {
    const error = validate.errors![0];
    const field = set.fields.find((f) => `/custom/${f.key}` === pointerOf(error) && f.entity === entity);
    const why = field?.status === 'archived' ? `The field ${field.label} is archived: its stored values are kept, but it takes no new ones.`
      : error.keyword === 'additionalProperties' ? `${pointerOf(error)} is not a custom field of ${entity}s in this workspace.`
        : error.keyword === 'required' ? `The custom field ${pointerOf(error)} is required.`
          : `The custom field ${pointerOf(error)} ${field ? `(${field.type}) ` : ''}${error.message ?? 'is not valid'}.`;
    throw new CuadraError('invalid_input', why, { field: pointerOf(error) });
  }
}

/** Stored custom values after a change: given keys replace, `null` removes; archived fields' values stay. */
export function mergeCustom(stored: Record<string, unknown> | undefined, given: Record<string, unknown> | undefined): Record<string, unknown> {
  const out = { ...(stored ?? {}) };
  for (const [k, v] of Object.entries(given ?? {})) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** The texts of custom values a search finds a record by (text, select, multiselect). */
export function searchableCustom(set: Pick<FieldSetDoc, 'fields'>, entity: FieldEntity, custom: Record<string, unknown> | undefined): string[] {
  const out: string[] = [];
  for (const f of set.fields) {
    if (f.entity !== entity || !['text', 'select', 'multiselect'].includes(f.type)) continue;
    const v = custom?.[f.key];
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) out.push(...v.filter((x): x is string => typeof x === 'string'));
  }
  return out;
}

export function newField(input: { entity: FieldEntity; key: string; label: string; type: FieldType; options?: string[]; required?: boolean }, now: Date): CustomField {
  return { id: newId('fld'), entity: input.entity, key: input.key, label: input.label.trim(), type: input.type, options: input.options ?? [], required: input.required ?? false, status: 'active', created_at: now, updated_at: now };
}

export const FIELD_VIEW_SCHEMA = {
  type: 'object', additionalProperties: false, required: ['id', 'entity', 'key', 'label', 'type', 'options', 'required', 'status', 'schema', 'created_at', 'updated_at'],
  properties: {
    id: TEXT, entity: { enum: ['deal', 'party'] }, key: TEXT, label: TEXT, type: { enum: [...FIELD_TYPES] }, options: { type: 'array', items: TEXT },
    required: { type: 'boolean' }, status: { enum: ['active', 'archived'] }, schema: { type: 'object', description: 'The JSON Schema its values are checked against.' },
    created_at: DATE_TIME_SCHEMA, updated_at: DATE_TIME_SCHEMA,
  },
} as const;

export function fieldView(f: CustomField) {
  return { id: f.id, entity: f.entity, key: f.key, label: f.label, type: f.type, options: f.options, required: f.required, status: f.status, schema: valueSchema(f), created_at: new Date(f.created_at).toISOString(), updated_at: new Date(f.updated_at).toISOString() };
}
