/**
 * The default chart of accounts: the Colombian PUC for businesses (Plan Único de Cuentas para
 * comerciantes, Decreto 2650 de 1993, Ministerio de Desarrollo Económico, with its later
 * amendments). The PUC fixes classes (1 digit), groups (2), accounts (4) and sub-accounts (6);
 * businesses open auxiliaries beneath them. This is the part a small business uses, plus every
 * code the automatic postings use (accounting/accounts.ts, accounting/payable-accounts.ts,
 * modules/bills/payments.ts, accounting/withholdings.ts), the sub-accounts of 1365, 1380, 2370,
 * 2380, 2505, 2510, 2610 and 5105 payroll's journal feed posts to (and their siblings), and the
 * year-end close (36 and 37). ARP reads ARL since Ley 1562 de 2012 renamed the risk administrators. A
 * code a feed posts to that is missing here is opened in the workspace's chart with the feed's name
 * (chart.ts, openPostedAccounts), so no statement shows a bare code. 135515's auxiliaries carry the
 * 2365 suffix of their withholding concept (accounting/withholdings.ts). Sub-account codes without a
 * legal sub-account under 2367, 2368 and 2408 are the auxiliaries Colombian charts commonly open
 * (see the note in accounting/payable-accounts.ts).
 * Names follow the decree's catalogue of accounts ("Catálogo de cuentas"); they were written
 * from it as commonly published, not re-checked line by line against the Diario Oficial here.
 */
export const PUC: Readonly<Record<string, string>> = {
  '1': 'Activo',
  '11': 'Disponible',
  '1105': 'Caja',
  '110505': 'Caja general',
  '110510': 'Cajas menores',
  '1110': 'Bancos',
  '111005': 'Moneda nacional',
  '111010': 'Moneda extranjera',
  '1120': 'Cuentas de ahorro',
  '112005': 'Bancos',
  '12': 'Inversiones',
  '1225': 'Certificados',
  '13': 'Deudores',
  '1305': 'Clientes',
  '130505': 'Nacionales',
  '130510': 'Del exterior',
  '1330': 'Anticipos y avances',
  '133005': 'A proveedores',
  '133015': 'A trabajadores',
  '1355': 'Anticipo de impuestos y contribuciones o saldos a favor',
  '135505': 'Anticipo de impuestos de renta y complementarios',
  '135510': 'Anticipo de impuestos de industria y comercio',
  '135515': 'Retención en la fuente',
  '13551515': 'Honorarios',
  '13551520': 'Comisiones',
  '13551525': 'Servicios',
  '13551530': 'Arrendamientos',
  '13551540': 'Compras',
  '135517': 'Impuesto a las ventas retenido',
  '135518': 'Impuesto de industria y comercio retenido',
  '1365': 'Cuentas por cobrar a trabajadores',
  '136505': 'Vivienda',
  '136510': 'Vehículos',
  '136515': 'Educación',
  '136520': 'Médicos, odontológicos y similares',
  '136525': 'Calamidad doméstica',
  '136595': 'Otros',
  '1380': 'Deudores varios',
  '138020': 'Cuentas por cobrar de terceros',
  '138025': 'Pagos por cuenta de terceros',
  '138095': 'Otros',
  '1399': 'Provisiones',
  '14': 'Inventarios',
  '1435': 'Mercancías no fabricadas por la empresa',
  '15': 'Propiedades, planta y equipo',
  '1504': 'Terrenos',
  '1516': 'Construcciones y edificaciones',
  '1520': 'Maquinaria y equipo',
  '1524': 'Equipo de oficina',
  '1528': 'Equipo de computación y comunicación',
  '1540': 'Flota y equipo de transporte',
  '1592': 'Depreciación acumulada',
  '159205': 'Construcciones y edificaciones',
  '159210': 'Maquinaria y equipo',
  '159215': 'Equipo de oficina',
  '159220': 'Equipo de computación y comunicación',
  '159235': 'Flota y equipo de transporte',
  '16': 'Intangibles',
  '1635': 'Licencias',
  '17': 'Diferidos',
  '1705': 'Gastos pagados por anticipado',
  '2': 'Pasivo',
  '21': 'Obligaciones financieras',
  '2105': 'Bancos nacionales',
  '22': 'Proveedores',
  '2205': 'Nacionales',
  '220505': 'Proveedores nacionales',
  '23': 'Cuentas por pagar',
  '2335': 'Costos y gastos por pagar',
  '2365': 'Retención en la fuente',
  '236515': 'Honorarios',
  '236520': 'Comisiones',
  '236525': 'Servicios',
  '236530': 'Arrendamientos',
  '236540': 'Compras',
  '2367': 'Impuesto a las ventas retenido',
  '236740': 'ReteIVA por pagar',
  '2368': 'Impuesto de industria y comercio retenido',
  '236801': 'ReteICA por pagar',
  '2370': 'Retenciones y aportes de nómina',
  '237005': 'Aportes a entidades promotoras de salud, EPS',
  '237006': 'Aportes a administradoras de riesgos laborales, ARL',
  '237010': 'Aportes parafiscales',
  '237025': 'Embargos judiciales',
  '237030': 'Libranzas',
  '237045': 'Fondos',
  '237095': 'Otros',
  '2380': 'Acreedores varios',
  '238030': 'Fondos de cesantías y/o pensiones',
  '24': 'Impuestos, gravámenes y tasas',
  '2404': 'De renta y complementarios',
  '2408': 'Impuesto sobre las ventas por pagar',
  '240805': 'IVA generado',
  '240810': 'IVA descontable',
  '2412': 'De industria y comercio',
  '25': 'Obligaciones laborales',
  '2505': 'Salarios por pagar',
  '250505': 'Salarios por pagar',
  '2510': 'Cesantías consolidadas',
  '251010': 'Ley 50 de 1990 y normas posteriores',
  '2515': 'Intereses sobre cesantías',
  '2520': 'Prima de servicios',
  '2525': 'Vacaciones consolidadas',
  '26': 'Pasivos estimados y provisiones',
  '2610': 'Para obligaciones laborales',
  '261005': 'Cesantías',
  '261010': 'Intereses sobre cesantías',
  '261015': 'Vacaciones',
  '261020': 'Prima de servicios',
  '261025': 'Prestaciones extralegales',
  '261095': 'Otras',
  '2615': 'Para obligaciones fiscales',
  '28': 'Otros pasivos',
  '2805': 'Anticipos y avances recibidos',
  '280505': 'De clientes',
  '2810': 'Depósitos recibidos',
  '3': 'Patrimonio',
  '31': 'Capital social',
  '3105': 'Capital suscrito y pagado',
  '3115': 'Aportes sociales',
  '33': 'Reservas',
  '3305': 'Reservas obligatorias',
  '36': 'Resultados del ejercicio',
  '3605': 'Utilidad del ejercicio',
  '3610': 'Pérdida del ejercicio',
  '37': 'Resultados de ejercicios anteriores',
  '3705': 'Utilidades acumuladas',
  '3710': 'Pérdidas acumuladas',
  '4': 'Ingresos',
  '41': 'Operacionales',
  '4135': 'Comercio al por mayor y al por menor',
  '413595': 'Venta de otros productos',
  '4155': 'Actividades inmobiliarias, empresariales y de alquiler',
  '4175': 'Devoluciones en ventas (DB)',
  '417505': 'Devoluciones en ventas',
  '42': 'No operacionales',
  '4210': 'Financieros',
  '421005': 'Intereses',
  '4245': 'Utilidad en venta de propiedades, planta y equipo',
  '4250': 'Recuperaciones',
  '4255': 'Indemnizaciones',
  '4295': 'Diversos',
  '5': 'Gastos',
  '51': 'Operacionales de administración',
  '5105': 'Gastos de personal',
  '510503': 'Salario integral',
  '510506': 'Sueldos',
  '510512': 'Jornales',
  '510515': 'Horas extras y recargos',
  '510518': 'Comisiones',
  '510521': 'Viáticos',
  '510524': 'Incapacidades',
  '510527': 'Auxilio de transporte',
  '510530': 'Cesantías',
  '510533': 'Intereses sobre cesantías',
  '510536': 'Prima de servicios',
  '510539': 'Vacaciones',
  '510542': 'Primas extralegales',
  '510545': 'Auxilios',
  '510548': 'Bonificaciones',
  '510551': 'Dotación y suministro a trabajadores',
  '510560': 'Indemnizaciones laborales',
  '510563': 'Capacitación al personal',
  '510568': 'Aportes a administradoras de riesgos laborales, ARL',
  '510569': 'Aportes a entidades promotoras de salud, EPS',
  '510570': 'Aportes a fondos de pensiones y/o cesantías',
  '510572': 'Aportes cajas de compensación familiar',
  '510575': 'Aportes ICBF',
  '510578': 'SENA',
  '510595': 'Otros',
  '5110': 'Honorarios',
  '5115': 'Impuestos',
  '5120': 'Arrendamientos',
  '5130': 'Seguros',
  '5135': 'Servicios',
  '5140': 'Gastos legales',
  '5145': 'Mantenimiento y reparaciones',
  '5160': 'Depreciaciones',
  '516005': 'Construcciones y edificaciones',
  '516010': 'Maquinaria y equipo',
  '516015': 'Equipo de oficina',
  '516020': 'Equipo de computación y comunicación',
  '516035': 'Flota y equipo de transporte',
  '5195': 'Diversos',
  '52': 'Operacionales de ventas',
  '5205': 'Gastos de personal',
  '5235': 'Servicios',
  '5295': 'Diversos',
  '53': 'No operacionales',
  '5305': 'Financieros',
  '530505': 'Gastos bancarios',
  '530520': 'Intereses',
  '5310': 'Pérdida en venta y retiro de bienes',
  '5315': 'Gastos extraordinarios',
  '54': 'Impuesto de renta y complementarios',
  '5405': 'Impuesto de renta y complementarios',
  '6': 'Costos de ventas',
  '61': 'Costo de ventas y de prestación de servicios',
  '6135': 'Comercio al por mayor y al por menor',
  '62': 'Compras',
  '6205': 'De mercancías',
  '7': 'Costos de producción o de operación',
  '71': 'Materia prima',
  '72': 'Mano de obra directa',
  '73': 'Costos indirectos',
  '74': 'Contratos de servicios',
};

/** What an account is, from its class (the PUC's first digit). */
export const ACCOUNT_TYPES = ['asset', 'liability', 'equity', 'income', 'expense', 'cost'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

/** The classes this chart holds (8 and 9, memorandum accounts, are not kept). */
export const CLASSES = ['1', '2', '3', '4', '5', '6', '7'] as const;

const TYPE_OF_CLASS: Record<string, AccountType> = { 1: 'asset', 2: 'liability', 3: 'equity', 4: 'income', 5: 'expense', 6: 'cost', 7: 'cost' };

/** The account's type, from its class. */
export function accountType(code: string): AccountType {
  return TYPE_OF_CLASS[code[0]];
}

/**
 * The side an account's balance normally sits on, from its class: assets, expenses and costs are
 * debit accounts; liabilities, equity and income credit accounts. Contra accounts inside a class
 * (1592 depreciation, 4175 sales returns) keep their class's side, so their balance shows negative.
 */
export function normalBalance(code: string): 'debit' | 'credit' {
  const t = accountType(code);
  return t === 'asset' || t === 'expense' || t === 'cost' ? 'debit' : 'credit';
}

/**
 * The PUC level of a code: class (1 digit), group (2), account (4), sub-account (6), auxiliary (8+).
 * Postings go to accounts or below; classes and groups only total.
 */
export function levelOf(code: string): 'class' | 'group' | 'account' | 'subaccount' | 'auxiliary' {
  return code.length === 1 ? 'class' : code.length === 2 ? 'group' : code.length === 4 ? 'account' : code.length === 6 ? 'subaccount' : 'auxiliary';
}

/** The parent code in the PUC hierarchy (null for a class). */
export function parentCode(code: string): string | null {
  if (code.length === 1) return null;
  if (code.length === 2) return code[0];
  return code.slice(0, code.length - 2);
}

/** A code's shape: digits, 1, 2 or an even count up to 12 (each level below the group adds two). */
export const ACCOUNT_CODE_PATTERN = '^[1-7]([0-9]([0-9]{2}){0,5})?$';
