import { operationsMaintenance, type MaintenanceHook } from '@cuadra/shared';
import { acquisitionOperation, disposalOperation } from './ops.ts';

/**
 * The sweep's share of fixed assets: acquisitions and disposals a dead process left half done
 * (the runner, after its one lease), those an older version left on the asset adopted first; the
 * entries' ids come from the asset, so nothing is posted twice.
 */
export const assetsMaintenance: MaintenanceHook = operationsMaintenance([acquisitionOperation, disposalOperation]);
