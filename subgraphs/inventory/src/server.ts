import { defineSubgraph, entityResolvers } from '@cuadra/shared';
import { owned } from './modules/index.ts';
import { holdResolvers, previewResolvers } from './modules/stock/finance_documents.ts';
import type { WarehouseDoc } from './modules/warehouses/model.ts';
import { warehouses } from './modules/warehouses/model.ts';

const warehouse = entityResolvers<WarehouseDoc>(warehouses, (w) => ({ id: w._id, code: w.code, name: w.name }));

/** The inventory subgraph: warehouses, the stock ledger and its valuation (ARCHITECTURE.md, "Inventory"). */
export const { name, reads, tools, typeDefs, createServer } = defineSubgraph({
  name: 'inventory',
  owned,
  schema: new URL('../schema.graphql', import.meta.url),
  resolvers: {
    Query: { warehouse: warehouse.byId, ...previewResolvers },
    Mutation: holdResolvers,
    Warehouse: warehouse.reference,
  },
});
