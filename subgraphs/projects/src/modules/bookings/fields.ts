import { CuadraError } from '@cuadra/shared';
import { ZONE_SCHEMA, checkZone } from '../../calendar/time.ts';
import type { BookingTypeDoc } from '../booking_types/model.ts';

/** The booker's details, as bookings.create and the public page take them. */
export const BOOKER_FIELDS = {
  start: { type: 'string', format: 'date-time' },
  name: { type: 'string', minLength: 1, maxLength: 200 },
  email: { type: 'string', format: 'email', maxLength: 254 },
  time_zone: ZONE_SCHEMA,
  answers: { type: 'object', maxProperties: 10, additionalProperties: { type: 'string', maxLength: 2000 } },
} as const;

/** The answers to a type's questions: unknown keys and missing required ones refused at their pointer. */
export function checkAnswers(type: BookingTypeDoc, answers: Record<string, string> = {}): Record<string, string> {
  for (const key of Object.keys(answers)) {
    if (!type.questions.some((q) => q.key === key)) throw new CuadraError('invalid_input', `${type.name} asks no question "${key}".`, { field: `/answers/${key}` });
  }
  for (const q of type.questions) {
    if (q.required && !answers[q.key]?.trim()) throw new CuadraError('invalid_input', `"${q.label}" needs an answer.`, { field: `/answers/${q.key}` });
  }
  return Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, v.trim()]));
}

/** The asker's zone (default the type's), checked. */
export function askerZone(type: BookingTypeDoc, zone: string | undefined): string {
  const z = zone ?? type.time_zone;
  checkZone(z, '/time_zone');
  return z;
}
