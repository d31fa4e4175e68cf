import { bogotaClock, nextSendWindow } from '../../lib/windows.ts';

const DAYS = ['domingo', 'lunes', 'martes', 'miércoles', 'jueves', 'viernes', 'sábado'];

/** The first send window at or after `at`, and, when it is later, why (in the owner's language: Spanish first). */
export function placeInWindow(at: Date): { start: Date; end: Date; reason: string | null } {
  const w = nextSendWindow(at);
  if (w.start.getTime() === at.getTime()) return { ...w, reason: null };
  const asked = bogotaClock(at);
  const hh = (m: number) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  return { ...w, reason: `Ley 2300 de 2023: ${DAYS[asked.weekday]} ${asked.date} ${hh(asked.minutes)} (Bogotá) no está dentro de un horario permitido (lunes a viernes 7:00–19:00, sábados 8:00–15:00, nunca domingos ni festivos); se envía desde ${DAYS[bogotaClock(w.start).weekday]} ${bogotaClock(w.start).date} ${hh(bogotaClock(w.start).minutes)}.` };
}
