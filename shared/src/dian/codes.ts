import { createRequire } from 'node:module';

/**
 * DIAN's code lists for electronic invoices (Anexo Técnico de Factura Electrónica de Venta 1.9,
 * Resolución 000165 de 2023, §13 "Listas de códigos"), as the generators, the parties' fiscal
 * fields and the built-in sandbox read them. The values are DIAN's own genericode lists (its
 * "caja de herramientas"); README.md beside this file says where each comes from.
 */

/** §13.4.2 Departamentos: the DANE code (2 digits) of each department, as DIAN names them. */
export const DEPARTMENTS: Readonly<Record<string, string>> = {
  '05': 'Antioquia', '08': 'Atlántico', '11': 'Bogotá', '13': 'Bolívar', '15': 'Boyacá', '17': 'Caldas', '18': 'Caquetá', '19': 'Cauca',
  '20': 'Cesar', '23': 'Córdoba', '25': 'Cundinamarca', '27': 'Chocó', '41': 'Huila', '44': 'La Guajira', '47': 'Magdalena', '50': 'Meta',
  '52': 'Nariño', '54': 'Norte de Santander', '63': 'Quindío', '66': 'Risaralda', '68': 'Santander', '70': 'Sucre', '73': 'Tolima',
  '76': 'Valle del Cauca', '81': 'Arauca', '85': 'Casanare', '86': 'Putumayo', '88': 'San Andrés y Providencia', '91': 'Amazonas',
  '94': 'Guainía', '95': 'Guaviare', '97': 'Vaupés', '99': 'Vichada',
};

let municipalities: Readonly<Record<string, string>> | undefined;

/** §13.4.3 Municipios: DIVIPOLA code (5 digits, the first two its department's) → name, 1,122 of them. Read on first use. */
export function dianMunicipalities(): Readonly<Record<string, string>> {
  municipalities ??= createRequire(import.meta.url)('./municipalities.json') as Record<string, string>;
  return municipalities;
}

/** A municipality by its DIVIPOLA code, with its department; null when DIAN's list has no such code. */
export function municipality(code: string): { code: string; name: string; department_code: string; department: string } | null {
  if (!/^\d{5}$/.test(code)) return null;
  const name = dianMunicipalities()[code];
  const department = DEPARTMENTS[code.slice(0, 2)];
  return name && department ? { code, name, department_code: code.slice(0, 2), department } : null;
}

/** §13.2.6.1 Responsabilidades fiscales (cbc:TaxLevelCode of a party). */
export const FISCAL_RESPONSIBILITIES: Readonly<Record<string, string>> = {
  'O-13': 'Gran contribuyente',
  'O-15': 'Autorretenedor',
  'O-23': 'Agente de retención IVA',
  'O-47': 'Régimen simple de tributación',
  'R-99-PN': 'No aplica – Otros',
};

/** §13.2.6.2 Tributos of a party (PartyTaxScheme/cac:TaxScheme): the tax it is responsible for. */
export const PARTY_TAX_SCHEMES: Readonly<Record<string, string>> = { '01': 'IVA', '04': 'INC', ZA: 'IVA e INC', ZZ: 'No aplica' };

/** §13.2.3 Tipos de organización jurídica (cbc:AdditionalAccountID): 1 persona jurídica, 2 persona natural. */
export const PERSON_TYPES = { legal: '1', natural: '2' } as const;

/** §13.3.4.1 Formas de pago (cac:PaymentMeans/cbc:ID): 1 contado, 2 crédito. */
export const PAYMENT_FORMS = { cash: '1', credit: '2' } as const;

/** §13.3.4.2 Medios de pago (cbc:PaymentMeansCode), the ones a Colombian business uses; the list has 75. */
export const PAYMENT_MEANS: Readonly<Record<string, string>> = {
  '1': 'Instrumento no definido', '2': 'Crédito ACH', '3': 'Débito ACH', '10': 'Efectivo', '20': 'Cheque', '30': 'Transferencia Crédito',
  '31': 'Transferencia Débito', '42': 'Consignación bancaria', '45': 'Transferencia Crédito Bancario', '46': 'Transferencia Débito Interbancario',
  '47': 'Transferencia Débito Bancaria', '48': 'Tarjeta Crédito', '49': 'Tarjeta Débito', ZZZ: 'Acuerdo mutuo',
};

/** §13.2.1 Tipos de documento de identificación (schemeName of cbc:CompanyID). */
export const ID_TYPES: Readonly<Record<string, string>> = { NIT: '31', CC: '13', CE: '22', PASSPORT: '41', FOREIGN: '42' };

/** DIAN itself, as it names itself in its ApplicationResponse, as the authorising provider and as the validator of an AttachedDocument. */
export const DIAN_PARTY = { name: 'Unidad Especial Dirección de Impuestos y Aduanas Nacionales', nit: '800197268', check_digit: 4 } as const;

/** Every code of list 13.3.4.2 (MediosPago-2.1): what cbc:PaymentMeansCode may say. */
export const PAYMENT_MEANS_CODES: readonly string[] = [
  ...Array.from({ length: 53 }, (_, i) => String(i + 1)), '60', '61', '62', '63', '64', '65', '66', '67', '70', '74', '75', '76', '77', '78',
  '91', '92', '93', '94', '95', '96', '97', 'ZZZ',
];
