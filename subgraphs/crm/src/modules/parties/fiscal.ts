import { CuadraError } from '@cuadra/shared';
import { FISCAL_RESPONSIBILITIES, municipality, PARTY_TAX_SCHEMES } from '@cuadra/shared/dian';

/**
 * A party's fiscal profile: what a Colombian e-invoice must say of a buyer or seller (Anexo
 * Técnico 1.9, AccountingCustomerParty / AccountingSupplierParty): whether it is a company or a
 * person (AdditionalAccountID), its name as registered in the RUT (RegistrationName), its fiscal
 * responsibilities (TaxLevelCode, list 13.2.6.1), the tax it is responsible for (TaxScheme, list
 * 13.2.6.2) and its fiscal address with DANE's municipality code (list 13.4.3).
 */
export interface PartyFiscal {
  person_type: 'legal' | 'natural';
  /** The name registered in the RUT; null: the party's name. */
  legal_name: string | null;
  responsibilities: string[];
  tax_scheme: string;
  address: FiscalAddress | null;
}

/** A fiscal address: a Colombian one names its municipality by DANE code (its department follows from it). */
export interface FiscalAddress {
  line: string;
  municipality_code: string | null;
  postal_code: string | null;
  country: string;
}

/** JSON Schema of the fiscal profile as given (parties.create, parties.update). */
export const FISCAL_INPUT = {
  type: 'object', additionalProperties: false, required: ['person_type'],
  description: 'What a Colombian e-invoice says of the party: company (legal) or person (natural), its name in the RUT, fiscal responsibilities (O-13 gran contribuyente, O-15 autorretenedor, O-23 agente de retención IVA, O-47 régimen simple, R-99-PN no aplica), the tax it answers for (01 IVA, 04 INC, ZA both, ZZ none) and its fiscal address with the DANE municipality code.',
  properties: {
    person_type: { enum: ['legal', 'natural'] },
    legal_name: { type: 'string', minLength: 1, maxLength: 450 },
    responsibilities: { type: 'array', minItems: 1, maxItems: 5, uniqueItems: true, items: { enum: Object.keys(FISCAL_RESPONSIBILITIES) } },
    tax_scheme: { enum: Object.keys(PARTY_TAX_SCHEMES) },
    address: {
      type: 'object', additionalProperties: false, required: ['line'],
      properties: {
        line: { type: 'string', minLength: 1, maxLength: 300 },
        municipality_code: { type: 'string', pattern: '^[0-9]{5}$', description: 'DANE DIVIPOLA code of the municipality (11001 Bogotá, 05001 Medellín…); Colombian addresses only.' },
        postal_code: { type: 'string', pattern: '^[0-9A-Za-z -]{1,10}$' },
        country: { type: 'string', pattern: '^[A-Z]{2}$' },
      },
    },
  },
} as const;

const NULLABLE = { type: ['string', 'null'] } as const;

/** JSON Schema of the fiscal profile as shown; the municipality and department names come from DIAN's list. */
export const FISCAL_VIEW_SCHEMA = {
  anyOf: [{ type: 'null' }, {
    type: 'object', additionalProperties: false, required: ['person_type', 'legal_name', 'responsibilities', 'tax_scheme', 'address'],
    properties: {
      person_type: { enum: ['legal', 'natural'] },
      legal_name: NULLABLE,
      responsibilities: { type: 'array', items: { type: 'string' } },
      tax_scheme: { type: 'string' },
      address: {
        anyOf: [{ type: 'null' }, {
          type: 'object', additionalProperties: false, required: ['line', 'municipality_code', 'municipality', 'department_code', 'department', 'postal_code', 'country'],
          properties: { line: { type: 'string' }, municipality_code: NULLABLE, municipality: NULLABLE, department_code: NULLABLE, department: NULLABLE, postal_code: NULLABLE, country: { type: 'string' } },
        }],
      },
    },
  }],
} as const;

/** The fiscal profile as given, checked: the municipality in DIAN's list (a Colombian address needs one, a foreign one has none), R-99-PN alone. */
export function parseFiscal(input: { person_type: 'legal' | 'natural'; legal_name?: string; responsibilities?: string[]; tax_scheme?: string; address?: { line: string; municipality_code?: string; postal_code?: string; country?: string } } | undefined): PartyFiscal | null {
  if (!input) return null;
  const responsibilities = input.responsibilities ?? ['R-99-PN'];
  if (responsibilities.includes('R-99-PN') && responsibilities.length > 1) {
    throw new CuadraError('invalid_input', 'R-99-PN means "no responsibility applies": it cannot be listed with others.', { field: '/fiscal/responsibilities' });
  }
  let address: FiscalAddress | null = null;
  if (input.address) {
    const country = input.address.country ?? 'CO';
    const code = input.address.municipality_code;
    if (country === 'CO') {
      if (!code) throw new CuadraError('invalid_input', 'A Colombian fiscal address names its municipality by DANE code (11001 for Bogotá).', { field: '/fiscal/address/municipality_code' });
      if (!municipality(code)) throw new CuadraError('invalid_input', `${code} is not a municipality of DIAN's list (DANE DIVIPOLA codes: 11001 Bogotá, 05001 Medellín…).`, { field: '/fiscal/address/municipality_code' });
    } else if (code) {
      throw new CuadraError('invalid_input', 'DANE municipality codes are Colombian; a foreign address has none.', { field: '/fiscal/address/municipality_code' });
    }
    address = { line: input.address.line.trim(), municipality_code: code ?? null, postal_code: input.address.postal_code ?? null, country };
  }
  return { person_type: input.person_type, legal_name: input.legal_name?.trim() ?? null, responsibilities, tax_scheme: input.tax_scheme ?? (input.person_type === 'legal' ? '01' : 'ZZ'), address };
}

/** The fiscal profile as shown, with the names of its municipality and department. */
export function fiscalView(f: PartyFiscal | null | undefined) {
  if (!f) return null;
  const m = f.address?.municipality_code ? municipality(f.address.municipality_code) : null;
  return {
    person_type: f.person_type, legal_name: f.legal_name, responsibilities: f.responsibilities, tax_scheme: f.tax_scheme,
    address: f.address ? {
      line: f.address.line, municipality_code: f.address.municipality_code, municipality: m?.name ?? null, department_code: m?.department_code ?? null,
      department: m?.department ?? null, postal_code: f.address.postal_code, country: f.address.country,
    } : null,
  };
}
