/**
 * A row of the projects subgraph's `booking_changes_since` feed (projects bookings/changes.ts): one
 * state a booking took, as crm and finance read it through the graph (ARCHITECTURE.md, "Bookings
 * reach CRM and finance"). The feed's contract, written once for its publisher and its readers.
 */
// A type, not an interface: a records source's rows are plain records (index signature).
export type BookingChangeRow = {
  /** `<booking id>#<rev>`. */
  id: string;
  booking_id: string;
  /** The booking's rev this state is: readers apply a booking's states forward only. */
  rev: number;
  status: 'pending' | 'confirmed' | 'cancelled';
  type_id: string;
  type_name: string;
  /** RFC 3339 instants. */
  start: string;
  end: string;
  /** The booking type's zone: the host's wall clock. */
  host_time_zone: string;
  name: string;
  /** Lower-cased. */
  email: string;
  /** Before VAT; `tax_rate_ppm` null: finance's default; `invoice`: what a confirmed booking makes. */
  price: { amount: number; currency: string; tax_rate_ppm: number | null; invoice: 'draft' | 'posted' } | null;
  /** The workspace's country as the booking call's principal stated it (null: it did not). */
  country: string | null;
  changed_at: string;
  /** Its place in the feed; null for a change a crash left without it. */
  seq: number | null;
};
