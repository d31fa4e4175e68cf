import { defineListTool, searchTerm } from '@cuadra/shared';
import { categorizationRules, RULE_VIEW_SCHEMA, ruleMatches, ruleView } from '../model.ts';

/** Lists the categorization rules, newest first. */
export const listRules = defineListTool({
  name: 'bank.list_rules',
  description: 'List the categorization rules for bank transactions, newest first; search a case-insensitive part of the name or description test.',
  model: categorizationRules,
  view: ruleView,
  viewSchema: RULE_VIEW_SCHEMA,
  filters: { search: { type: 'string', minLength: 1, maxLength: 100 } },
  match: ({ search }) => {
    const text = searchTerm(search);
    return text ? (r) => ruleMatches(r, text) : undefined;
  },
});
