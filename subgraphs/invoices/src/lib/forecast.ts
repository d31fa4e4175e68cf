/**
 * Monthly forecasting for the forecast metrics (issue 17). No maintained npm library does
 * Holt-Winters (the registry has ARIMA ports compiled to WebAssembly and abandoned one-file
 * packages), so this is a short implementation, tested on hand-checkable series and back-tested
 * (subgraphs/invoices/test/forecasts.test.ts). The method depends on how much history there is:
 *
 * - ≥ 24 months (two seasons): **Holt-Winters additive** (level, trend, 12 monthly seasonal terms;
 *   Hyndman & Athanasopoulos, *Forecasting: Principles and Practice*, §8.3). Initial state from the
 *   first two seasons: trend = (mean of season 2 − mean of season 1) / 12, the level on that line
 *   at the end of season 1, each month's seasonal term the mean of its two deviations from the
 *   line. α, β, γ ∈ {0.05, 0.15, …, 0.95} chosen by the least sum of squared one-step errors over
 *   the rest of the history. Additive, not multiplicative: a month with no activity (0) is common
 *   for a small business and breaks multiplicative seasonal ratios.
 * - 13–23 months: **seasonal naive with drift**: the same month a year before plus a year's drift
 *   per year ahead, the drift the mean year-over-year change of the months that have one.
 * - 3–12 months: **linear trend** (least squares over the months).
 * - 1–2 months: **mean** of the months.
 * - none: **none**, every forecast 0.
 *
 * Forecasts are rounded to integer minor units and, since revenue, expenses, inflows and outflows
 * are not negative, floored at 0 (`floorAtZero`).
 */

export type ForecastMethod = 'holt_winters_additive' | 'seasonal_naive_drift' | 'linear_trend' | 'mean' | 'none';

export interface Forecast {
  method: ForecastMethod;
  values: number[];
  /** The smoothing parameters Holt-Winters chose (absent for the other methods). */
  parameters?: { alpha: number; beta: number; gamma: number };
}

export const SEASON = 12;
const GRID = [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95];

interface HwState { level: number; trend: number; seasonal: number[]; sse: number }

/** Runs Holt-Winters additive over `y` with the given parameters: the final state and the one-step SSE. */
function holtWintersRun(y: readonly number[], alpha: number, beta: number, gamma: number, m = SEASON): HwState {
  const mean = (from: number) => y.slice(from, from + m).reduce((s, v) => s + v, 0) / m;
  const m1 = mean(0);
  const trend0 = (mean(m) - m1) / m;
  // The line through the first two seasons: value at month i = a + trend0·i.
  const a = m1 - trend0 * (m - 1) / 2;
  const seasonal = Array.from({ length: m }, (_, j) => ((y[j] - (a + trend0 * j)) + (y[j + m] - (a + trend0 * (j + m)))) / 2);
  let level = a + trend0 * (m - 1);
  let trend = trend0;
  let sse = 0;
  for (let t = m; t < y.length; t++) {
    const s = seasonal[t % m];
    const predicted = level + trend + s;
    sse += (y[t] - predicted) ** 2;
    const newLevel = alpha * (y[t] - s) + (1 - alpha) * (level + trend);
    trend = beta * (newLevel - level) + (1 - beta) * trend;
    level = newLevel;
    seasonal[t % m] = gamma * (y[t] - level) + (1 - gamma) * s;
  }
  return { level, trend, seasonal, sse };
}

/** Holt-Winters additive with parameters from the grid (least one-step SSE; ties keep the first). */
export function holtWinters(y: readonly number[], horizon: number, m = SEASON): Forecast {
  if (y.length < 2 * m) throw new Error(`Holt-Winters needs two seasons (${2 * m} points), got ${y.length}.`);
  let best: { state: HwState; alpha: number; beta: number; gamma: number } | null = null;
  for (const alpha of GRID) for (const beta of GRID) for (const gamma of GRID) {
    const state = holtWintersRun(y, alpha, beta, gamma, m);
    if (!best || state.sse < best.state.sse - 1e-9) best = { state, alpha, beta, gamma };
  }
  const { state, alpha, beta, gamma } = best!;
  const n = y.length;
  const values = Array.from({ length: horizon }, (_, i) => state.level + (i + 1) * state.trend + state.seasonal[(n + i) % m]);
  return { method: 'holt_winters_additive', values, parameters: { alpha, beta, gamma } };
}

/** The same month a year before plus the mean year-over-year change per year ahead. */
export function seasonalNaiveDrift(y: readonly number[], horizon: number, m = SEASON): Forecast {
  const n = y.length;
  if (n <= m) throw new Error(`Seasonal naive needs more than one season (${m} points), got ${n}.`);
  const changes = y.slice(m).map((v, i) => v - y[i]);
  const yearly = changes.reduce((s, v) => s + v, 0) / changes.length;
  const values = Array.from({ length: horizon }, (_, i) => {
    // The latest observed same calendar month is k years before (k = 1 for the first 12 months ahead…).
    const k = Math.floor(i / m) + 1;
    return y[n + i - m * k] + k * yearly;
  });
  return { method: 'seasonal_naive_drift', values };
}

/** Least-squares line through the points, extended. */
export function linearTrend(y: readonly number[], horizon: number): Forecast {
  const n = y.length;
  const mx = (n - 1) / 2;
  const my = y.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  y.forEach((v, x) => {
    sxy += (x - mx) * (v - my);
    sxx += (x - mx) ** 2;
  });
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { method: 'linear_trend', values: Array.from({ length: horizon }, (_, i) => my + slope * (n + i - mx)) };
}

/** The forecast of a monthly series by the method its length allows (see the module comment). */
export function forecastMonthly(y: readonly number[], horizon: number, options: { floorAtZero?: boolean } = {}): Forecast {
  const n = y.length;
  const f: Forecast = n >= 2 * SEASON ? holtWinters(y, horizon)
    : n > SEASON ? seasonalNaiveDrift(y, horizon)
      : n >= 3 ? linearTrend(y, horizon)
        : n >= 1 ? { method: 'mean', values: Array(horizon).fill(y.reduce((s, v) => s + v, 0) / n) }
          : { method: 'none', values: Array(horizon).fill(0) };
  const floor = options.floorAtZero ?? true;
  return { ...f, values: f.values.map((v) => Math.round(floor ? Math.max(0, v) : v) + 0) };
}

/** Mean absolute error and mean absolute percentage error (in percent; months with actual 0 left out of MAPE). */
export function accuracy(actual: readonly number[], predicted: readonly number[]): { mae: number; mape: number } {
  const errors = actual.map((a, i) => Math.abs(a - predicted[i]));
  const pct = actual.map((a, i) => (a === 0 ? null : errors[i] / Math.abs(a))).filter((v): v is number => v !== null);
  return {
    mae: errors.reduce((s, v) => s + v, 0) / errors.length,
    mape: pct.length ? (100 * pct.reduce((s, v) => s + v, 0)) / pct.length : 0,
  };
}
