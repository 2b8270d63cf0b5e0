import { recognizeOrderNotification } from '@shared/domain/callbacks';
import { quarantineIdOf } from '@shared/domain/quarantine';
import { METRIC } from '@shared/observability/metric-names';
import { calibrateReceived, type SigningProfile, type SigningSecrets } from '@shared/signing';
import type { PayoutNudge } from '@shared/ports/callbacks';
import type { QuarantineOutcome, QuarantineStore } from '@shared/ports/quarantine';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';

/**
 * The quarantine of order notifications: well-formed notifications that carry the partner public
 * key but whose signature matches none of the configured keys and schemes. They are kept (never in
 * the events table, never applied) so the first real notification teaches the signing scheme
 * (`payrelay signature calibrate --from-quarantine`) instead of being lost with a 401.
 */

/** Settings of the quarantine (QUARANTINE_MAX_PER_HOUR, QUARANTINE_RETENTION_DAYS, MISMATCH_NUDGE_MINUTES). */
export interface QuarantineSettings {
  maxPerHour: number;
  retentionDays: number;
  /** A payout named by mismatched notifications is made due at most once per this many minutes. */
  nudgeEveryMinutes: number;
}

export interface QuarantineDeps {
  quarantine: QuarantineStore;
  payouts: PayoutNudge;
  settings: QuarantineSettings;
  clock: Clock;
  log: Log;
  telemetry: Telemetry;
}

/**
 * Keeps a notification whose signature did not match, counts and logs it, and, when it names a
 * payout payrelay knows, makes that payout due for reconciliation (at most once per payout per
 * `nudgeEveryMinutes`): the notification itself proves nothing, but GetPayout is cheap and decides.
 * Nothing else changes.
 */
export async function quarantineMismatch(
  deps: QuarantineDeps,
  notification: { body: string; payload: object; sourceIp?: string },
): Promise<QuarantineOutcome> {
  const receivedAt = deps.clock.now();
  const recognition = recognizeOrderNotification(notification.payload);
  const withdrawalReference = recognition.recognized ? recognition.event.withdrawalReference : undefined;
  const id = quarantineIdOf(notification.body, receivedAt);
  const outcome = await deps.quarantine.keep(
    {
      id,
      body: notification.body,
      receivedAt: receivedAt.toISOString(),
      withdrawalReference,
      sourceIp: notification.sourceIp,
      expiresAt: Math.floor(receivedAt.getTime() / 1000) + deps.settings.retentionDays * 86_400,
    },
    deps.settings.maxPerHour,
  );
  deps.telemetry.count(outcome === 'hour-full' ? METRIC.quarantineFull : METRIC.notificationQuarantined);
  // A full hour is a flood: it nudges nothing either (the reconciler's schedule still looks).
  const payoutsDue =
    withdrawalReference === undefined || outcome === 'hour-full'
      ? 0
      : await deps.payouts.markDueNow(withdrawalReference, receivedAt, { atMostEveryMs: deps.settings.nudgeEveryMinutes * 60_000 });
  deps.log.warn(
    outcome === 'hour-full'
      ? `order notification signature does not match; quarantine full for this hour (${deps.settings.maxPerHour}), not kept`
      : 'order notification signature does not match; quarantined, not applied (payrelay signature calibrate --from-quarantine)',
    { quarantineId: id, outcome, withdrawalReference, payoutsDue, sourceIp: notification.sourceIp },
  );
  return outcome;
}

/** What calibration against the quarantine found. */
export interface QuarantineCalibration {
  /** Notifications tried. */
  tried: number;
  /** Each profile that reproduced at least one signature, with how many it reproduced, best first. */
  profiles: Array<{ profile: SigningProfile; reproduced: number; ids: string[] }>;
}

/**
 * Tries every signing profile and key recipe against the quarantined notifications of a period
 * (over the text as received and over each re-serialization) and ranks the profiles by how many
 * signatures each reproduces. A profile reproducing all of them is the provider's scheme.
 */
export async function calibrateFromQuarantine(
  quarantine: QuarantineStore,
  secrets: SigningSecrets,
  range: { since: Date; until: Date; limit: number },
): Promise<QuarantineCalibration> {
  const notifications = await quarantine.list(range.since, range.until, range.limit);
  const found = new Map<string, { profile: SigningProfile; reproduced: number; ids: string[] }>();
  for (const notification of notifications) {
    for (const profile of calibrateReceived(notification.body, secrets, 'orderNotification')) {
      const entry = found.get(profile.name) ?? { profile, reproduced: 0, ids: [] };
      entry.reproduced += 1;
      entry.ids.push(notification.id);
      found.set(profile.name, entry);
    }
  }
  const profiles = [...found.values()].sort((a, b) => b.reproduced - a.reproduced);
  return { tried: notifications.length, profiles };
}
