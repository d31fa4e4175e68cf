// What e-invoicing (invoices subgraph) and e-payroll (payroll subgraph) share of DIAN: the code
// lists, the NIT check digit, the authority's answer, the sealing of a set-up's secrets and the
// way amounts are written. `@cuadra/shared/dian`.
export * from './codes.ts';
export { nitCheckDigit, parseNit } from './nit.ts';
export { AUTHORITY_ANSWER_SCHEMA, type AuthorityAnswer } from './authority.ts';
export { dianSecrets, type DianSecret, type DianSecrets, type SealedDianSecrets } from './settings-secrets.ts';
