import { dedupeKey, expiresAtFor, type CallbackSource, type Recognition } from '@shared/domain/callbacks';
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
  /** Correlation keys stored with the event and put on every log line about it. */
  keys: Pick<StoredEvent, 'appId' | 'userReference' | 'withdrawalReference'>;
}

export interface StoredCallback {
  eventId: string;
  outcome: 'stored' | 'duplicate';
  receivedAt: Date;
  /** The keys every further log line about this callback carries. */
  logKeys: Record<string, string | undefined>;
}

/**
 * Stores an authentic callback once, verbatim, before anything acts on it (money-safety rule 6): one
 * conditional write keyed by a hash of its content, so a redelivery is recognized as a duplicate.
 * An unrecognized payload is kept too (rejecting it would make the provider retry forever), counted
 * and logged here; the caller applies only recognized ones.
 */
export async function storeCallback(deps: StoreCallbackDeps, callback: CallbackToStore): Promise<StoredCallback> {
  const { recognition } = callback;
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
    ...callback.keys,
    sourceIp: callback.sourceIp,
    via: callback.via,
  });
  deps.telemetry.count(outcome === 'stored' ? METRIC.webhookStored : METRIC.webhookDuplicate);
  const logKeys = { eventId, source: callback.source, outcome, ...callback.keys };
  if (!recognition.recognized) {
    if (outcome === 'stored') deps.telemetry.count(METRIC.webhookUnrecognized);
    deps.log.warn(`${callback.label} authentic but unrecognized; stored verbatim, not applied`, {
      ...logKeys,
      reason: recognition.reason,
    });
  }
  return { eventId, outcome, receivedAt, logKeys };
}
