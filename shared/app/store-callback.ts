import { dedupeKey, expiresAtFor, referencesOfUnrecognized, type CallbackSource, type Recognition } from '@shared/domain/callbacks';
import { METRIC } from '@shared/observability/metric-names';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import type { EventStore, StoredEvent } from '@shared/ports/callbacks';

export interface StoreCallbackDeps {
  events: EventStore;
  retentionDays: number;
  clock: Clock;
  log: Log;
  telemetry: Telemetry;
}

export interface CallbackToStore {
  source: CallbackSource;
  /** How log lines name this kind of callback ("KYC callback", "order notification"). */
  label: string;
  body: string;
  payload: unknown;
  recognition: Recognition<unknown>;
  sourceIp?: string;
  /** `catch-up` for a callback pulled from the KYC service instead of delivered (stored with the event). */
  via?: StoredEvent['via'];
  /**
   * Correlation keys stored with the event and put on every log line about it. For an unrecognized
   * callback, a reference not given here is read from `payload` (referencesOfUnrecognized).
   */
  keys: Pick<StoredEvent, 'appId' | 'userReference' | 'withdrawalReference'>;
}

export interface StoredCallback {
  eventId: string;
  outcome: 'stored' | 'duplicate';
  receivedAt: Date;
  /** The keys every further log line about this callback carries. */
  logKeys: Record<string, string | undefined>;
}

/** The keys a caller gave, without those it left undefined (so they do not hide one read from the body). */
function definedKeys(keys: CallbackToStore['keys']): CallbackToStore['keys'] {
  return Object.fromEntries(Object.entries(keys).filter(([, value]) => value !== undefined));
}

/**
 * Stores an authentic callback once, verbatim, before anything acts on it (money-safety rule 6): one
 * conditional write keyed by a hash of its content, so a redelivery is recognized as a duplicate.
 * An unrecognized payload is kept too (rejecting it would make the provider retry forever), counted
 * and logged here; the caller applies only recognized ones. It is still stored under the reference its
 * body names, when one can be read safely, so the operator finds it by the user or payout it is about
 * (`events list --reference`, `kyc status`): a label for listings and log lines, never trusted for
 * state (only a recognized event is applied, from its body read again).
 */
export async function storeCallback(deps: StoreCallbackDeps, callback: CallbackToStore): Promise<StoredCallback> {
  const { recognition } = callback;
  const keys = recognition.recognized ? callback.keys : { ...referencesOfUnrecognized(callback.source, callback.payload), ...definedKeys(callback.keys) };
  const eventId = dedupeKey(callback.source, callback.payload);
  const receivedAt = deps.clock.now();
  const outcome = await deps.events.putOnce({
    eventId,
    source: callback.source,
    body: callback.body,
    receivedAt: receivedAt.toISOString(),
    recognized: recognition.recognized,
    unrecognizedReason: recognition.recognized ? undefined : recognition.reason,
    expiresAt: expiresAtFor(receivedAt, deps.retentionDays),
    ...keys,
    sourceIp: callback.sourceIp,
    via: callback.via,
  });
  deps.telemetry.count(outcome === 'stored' ? METRIC.webhookStored : METRIC.webhookDuplicate);
  const logKeys = { eventId, source: callback.source, outcome, ...keys };
  if (!recognition.recognized) {
    if (outcome === 'stored') deps.telemetry.count(METRIC.webhookUnrecognized);
    deps.log.warn(`${callback.label} authentic but unrecognized; stored verbatim, not applied`, {
      ...logKeys,
      reason: recognition.reason,
    });
  }
  return { eventId, outcome, receivedAt, logKeys };
}
