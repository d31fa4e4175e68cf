import type express from 'express';
import {
  getArgumentValues, getVariableValues, Kind, locatedError, parse, validate,
  type FieldNode, type GraphQLField, type GraphQLFormattedError, type GraphQLSchema, type OperationDefinitionNode,
} from 'graphql';
import type { Principal } from './principal.ts';

/** A document that is exactly one tool mutation, parsed and validated once. */
interface Plan {
  operation: OperationDefinitionNode;
  field: FieldNode;
  fieldDef: GraphQLField<unknown, unknown>;
  /** The field's alias, else its name: the key of `data` and the error's `path`. */
  responseKey: string;
}

/** Documents kept (by their text): the gateway's planner and a client send a handful; anything past this is just not kept. */
const MAX_PLANS = 256;

/**
 * The subgraph's tool mutation over `/graphql` without Apollo's per-request pipeline, for the one
 * document shape that is nothing else: a single anonymous-or-named mutation whose only selection is
 * the tool mutation field (alias allowed), no fragments, no directives. Such a document is parsed and
 * validated against the schema once and kept by its text; each request then coerces its variables and
 * the field's arguments with graphql-js's own `getVariableValues` / `getArgumentValues` (the same
 * rules `execute` applies) and calls the tool, answering what Apollo answers for it:
 * `{"data":{<key>: answer}}`, or `{"errors":[formatted],"data":null}` (the field is non-null) with the
 * same `formatError`. Anything else — another document, a document that does not validate, variables
 * that do not coerce, a batch, persisted-query extensions, GET — goes on to Apollo untouched, before
 * anything has run. `test/surfaces.test.ts` compares both paths' answers byte for byte.
 */
export function toolMutationFastPath(
  schema: GraphQLSchema,
  mutationName: string,
  run: (args: Record<string, unknown>, principal: Principal) => Promise<unknown>,
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError,
): express.RequestHandler {
  const plans = new Map<string, Plan | null>();
  const fieldDef = schema.getMutationType()?.getFields()[mutationName];
  const planOf = (query: string): Plan | null => {
    const known = plans.get(query);
    if (known !== undefined) return known;
    const plan = fieldDef ? makePlan(schema, query, mutationName, fieldDef) : null;
    if (plans.size < MAX_PLANS) plans.set(query, plan);
    return plan;
  };
  return (req, res, next) => {
    const body = req.body as Record<string, unknown> | undefined;
    if (req.method !== 'POST' || body === null || typeof body !== 'object' || Array.isArray(body) || typeof body.query !== 'string' || body.extensions !== undefined) return next();
    const variables = body.variables ?? {};
    if (variables === null || typeof variables !== 'object' || Array.isArray(variables)) return next();
    const plan = planOf(body.query);
    if (!plan) return next();
    const name = plan.operation.name?.value;
    if (body.operationName != null && body.operationName !== name) return next();
    const coerced = getVariableValues(schema, plan.operation.variableDefinitions ?? [], variables as Record<string, unknown>);
    if (coerced.errors) return next();
    let args: Record<string, unknown>;
    try {
      args = getArgumentValues(plan.fieldDef, plan.field, coerced.coerced);
    } catch {
      return next();
    }
    const principal = res.locals.principal as Principal;
    void (async () => {
      let payload: unknown;
      try {
        payload = { data: { [plan.responseKey]: await run(args, principal) } };
      } catch (err) {
        // As graphql-js's execute and Apollo's error enrichment make it: located at the field, with a code.
        const located = locatedError(err, [plan.field], [plan.responseKey]);
        const formatted = { ...located.toJSON(), extensions: { ...located.extensions, code: located.extensions.code ?? 'INTERNAL_SERVER_ERROR' } };
        payload = { errors: [formatError(formatted, located)], data: null };
      }
      res.status(200);
      res.setHeader('content-type', 'application/json; charset=utf-8');
      res.end(`${JSON.stringify(payload)}\n`); // as Apollo writes it (a newline after the JSON)
    })().catch(next);
  };
}

function makePlan(schema: GraphQLSchema, query: string, mutationName: string, fieldDef: GraphQLField<unknown, unknown>): Plan | null {
  let document;
  try {
    document = parse(query, { maxTokens: 2_000 });
  } catch {
    return null;
  }
  if (document.definitions.length !== 1) return null;
  const operation = document.definitions[0];
  if (operation.kind !== Kind.OPERATION_DEFINITION || operation.operation !== 'mutation' || (operation.directives?.length ?? 0) > 0) return null;
  if ((operation.variableDefinitions ?? []).some((v) => (v.directives?.length ?? 0) > 0)) return null;
  const selections = operation.selectionSet.selections;
  if (selections.length !== 1) return null;
  const field = selections[0];
  if (field.kind !== Kind.FIELD || field.name.value !== mutationName || (field.directives?.length ?? 0) > 0 || field.selectionSet) return null;
  if (validate(schema, document).length > 0) return null;
  return { operation, field, fieldDef, responseKey: field.alias?.value ?? field.name.value };
}
