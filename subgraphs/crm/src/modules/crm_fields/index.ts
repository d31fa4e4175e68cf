import { defineModule, type SourceReader } from '@cuadra/shared';
import { pageOfRows } from '../pipelines/sources.ts';
import { fieldSets, readFields } from './model.ts';
import { archive } from './tools/archive.ts';
import { create } from './tools/create.ts';
import { list } from './tools/list.ts';
import { update } from './tools/update.ts';
import { CuadraError } from '@cuadra/shared';

/** records.list `crm_fields`: kind deal/party, status active/inactive (archived), search the label or key. */
const fieldsSource: SourceReader = async (q, ctx) => {
  if (q.kind && q.kind !== 'deal' && q.kind !== 'party') throw new CuadraError('invalid_input', `"${q.kind}" is not a kind of crm_fields (deal, party).`, { field: '/kind' });
  if (q.status && q.status !== 'active' && q.status !== 'inactive') throw new CuadraError('invalid_input', `"${q.status}" is not a status of crm_fields (active, inactive).`, { field: '/status' });
  const set = await readFields(ctx.db, ctx.workspace);
  const text = q.search?.toLowerCase();
  const rows = set.fields
    .filter((f) => (!q.kind || f.entity === q.kind) && (!q.status || (q.status === 'active') === (f.status === 'active')) && (!text || f.label.toLowerCase().includes(text) || f.key.includes(text)))
    .map((f) => ({ id: f.id, kind: f.entity, key: f.key, label: f.label, type: f.type, options: f.options, required: f.required, status: f.status === 'active' ? 'active' : 'inactive' }));
  return pageOfRows(`crm_fields:${q.kind ?? ''}:${q.status ?? ''}`, ctx.workspace, rows, q);
};

/** Custom fields of deals and parties: each workspace's fields are a JSON Schema their values are checked against. */
export const crmFieldsModule = defineModule({
  name: 'crm_fields',
  tools: [create, update, archive, list],
  models: [fieldSets],
  reads: { sources: { crm_fields: fieldsSource } },
});
