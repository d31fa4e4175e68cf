import { fromModules } from '@cuadra/shared';
import { inventoryCountsModule } from './inventory_counts/index.ts';
import { stockModule } from './stock/index.ts';
import { warehousesModule } from './warehouses/index.ts';

/** The inventory subgraph: its built modules, then the modules DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules('inventory', [warehousesModule, stockModule, inventoryCountsModule], []);
