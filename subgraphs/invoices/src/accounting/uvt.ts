// The UVT is law the books' withholdings and the tax calendar both read: it lives on the accounting
// floor, below the tax module (issue 32).

/**
 * The Unidad de Valor Tributario of each year (COP): the VAT period threshold and the minimum bases of retención en la fuente are set in it (art. 868 E.T.): 2026:
 * 52,374 (DIAN Resolución 000238 of 15 December 2025); 2025: 49,799 (Resolución 000193 of 4 December 2024);
 * 2024: 47,065 (the value the 2025 resolution's reports start from; its own resolution not checked here).
 */
export const UVT: Record<number, { value: number; verified: boolean }> = {
  2024: { value: 47_065, verified: true },
  2025: { value: 49_799, verified: true },
  2026: { value: 52_374, verified: true },
};
