/**
 * Classes of property, plant and equipment (PUC group 15, Decreto 2650 de 1993) and the fiscal cap
 * of each. The caps are Estatuto Tributario art. 137 parágrafo 1 (as written by Ley 1819 de 2016
 * art. 82): "la tasa por depreciación a deducir anualmente será la establecida de conformidad con
 * la técnica contable siempre que no exceda las tasas máximas" — construcciones y edificaciones
 * 2,22 %; maquinaria, equipos 10 %; muebles y enseres 10 %; flota y equipo de transporte terrestre
 * 10 %; equipo de computación and equipo de comunicación 20 %. Parágrafo 4: what the cap leaves
 * undeducted in a year is deducted after the useful life ends — the two books differ by timing,
 * which is the deferred-tax basis (NIIF para pymes §29).
 */
export const ASSET_CLASSES = {
  buildings: { name: 'Construcciones y edificaciones', cost: '1516', accumulated: '159205', expense: '516005', fiscal_cap_bps: 222 },
  machinery: { name: 'Maquinaria y equipo', cost: '1520', accumulated: '159210', expense: '516010', fiscal_cap_bps: 1000 },
  office_equipment: { name: 'Equipo de oficina (muebles y enseres)', cost: '1524', accumulated: '159215', expense: '516015', fiscal_cap_bps: 1000 },
  computers: { name: 'Equipo de computación y comunicación', cost: '1528', accumulated: '159220', expense: '516020', fiscal_cap_bps: 2000 },
  vehicles: { name: 'Flota y equipo de transporte', cost: '1540', accumulated: '159235', expense: '516035', fiscal_cap_bps: 1000 },
} as const;

export type AssetClass = keyof typeof ASSET_CLASSES;
export const ASSET_CLASS_KEYS = Object.keys(ASSET_CLASSES) as AssetClass[];

/** The class whose cost account a bill line was charged to (1524, 1528…), or null. */
export function classOfAccount(code: string): AssetClass | null {
  return ASSET_CLASS_KEYS.find((k) => ASSET_CLASSES[k].cost === code) ?? null;
}

/** Where a gain or a loss on a sale or retirement is booked (PUC 4245, 5310). */
export const DISPOSAL_ACCOUNTS = {
  gain: { code: '4245', name: 'Utilidad en venta de propiedades, planta y equipo' },
  loss: { code: '5310', name: 'Pérdida en venta y retiro de bienes' },
} as const;
