import { createHash } from 'node:crypto';

/**
 * Ids of quarantined order notifications: the UTC day one arrived and a hash of its body, so a
 * redelivery the same day is the same entry and the day (the table partition) is in the id itself.
 */

/** The id of a body received on a day: stable, so a redelivery the same day is one entry. */
export function quarantineIdOf(body: string, receivedAt: Date): string {
  return `${receivedAt.toISOString().slice(0, 10)}.${createHash('sha256').update(body, 'utf8').digest('hex').slice(0, 16)}`;
}

/** The UTC day a quarantine id belongs to, or undefined for a string that is not an id. */
export function quarantineDayOf(id: string): string | undefined {
  return /^(\d{4}-\d{2}-\d{2})\.[0-9a-f]{16}$/.exec(id)?.[1];
}
