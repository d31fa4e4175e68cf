// Colombian tax identifiers (DIAN): used by every subgraph that records a NIT, and by the e-documents.
/** DIAN weights for the NIT check digit, applied from the rightmost digit leftwards. */
const WEIGHTS = [3, 7, 13, 17, 19, 23, 29, 37, 41, 43, 47, 53, 59, 67, 71];

/** The check digit (DV) of a Colombian NIT body (digits only, up to 15). */
export function nitCheckDigit(body: string): number {
  let sum = 0;
  const digits = body.split('').reverse();
  digits.forEach((d, i) => {
    sum += Number(d) * WEIGHTS[i];
  });
  const r = sum % 11;
  return r > 1 ? 11 - r : r;
}

/** Splits `900123456-8` / `9001234568` style input; null when it is not a NIT with a valid DV. */
export function parseNit(text: string): { number: string; checkDigit: number } | null {
  const match = /^(\d{6,15})-?(\d)$/.exec(text.replace(/[.\s]/g, ''));
  if (!match) return null;
  const [, number, dv] = match;
  return nitCheckDigit(number) === Number(dv) ? { number, checkDigit: Number(dv) } : null;
}
