import { recognizeKycCallback, secretsEqual, type KycCallbackEvent } from '@shared/domain/callbacks';
import { applyKycEvent, needsConfirmation } from '@shared/domain/kyc-subject';
import { ConcurrentModificationError, WebhookUnauthorizedError } from '@shared/domain/errors';
import { METRIC } from '@shared/observability/metric-names';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import { storeCallback } from './store-callback';
import type { EventStore, WebhookReceipt } from '@shared/ports/callbacks';
import type { KycSubjectStore } from '@shared/ports/kyc';
import type { RefreshableSecret } from '@shared/ports/secrets';

/** The part of the KYC secret the receiver reads. */
export interface KycCallbackSecret {
  app_id: string;
  callback_token: string;
}

/** What applying a KYC event to the projection needs. */
export interface KycProjectionDeps {
  subjects: KycSubjectStore;
  clock: Clock;
  log: Log;
  telemetry: Telemetry;
}

export interface ReceiveKycCallbackDeps extends KycProjectionDeps {
  events: EventStore;
  secret: RefreshableSecret<KycCallbackSecret>;
  retentionDays: number;
}

/** One KYC callback as the handler hands it over: the path token, the verbatim body and its parse. */
export interface KycCallbackRequest {
  token: string;
  body: string;
  payload: unknown;
  sourceIp?: string;
}

/** How an event met the projection. */
export type ProjectionOutcome = 'applied' | 'unchanged';

const MAX_APPLY_ATTEMPTS = 5;

/**
 * Applies one recognized KYC event to its subject: read, apply in the domain, conditional write on
 * the version. An event already reflected (a redelivery, a replay) or outranked writes nothing.
 * @throws ConcurrentModificationError when other writers win every attempt (the event stays stored;
 *   a redelivery or a replay applies it)
 */
export async function applyKycCallback(
  deps: KycProjectionDeps,
  appId: string,
  event: KycCallbackEvent,
  eventId: string,
): Promise<ProjectionOutcome> {
  const ref = { appId, userReference: event.userReference };
  for (let attempt = 1; attempt <= MAX_APPLY_ATTEMPTS; attempt += 1) {
    const current = await deps.subjects.getSubject(ref);
    const result = applyKycEvent(current, appId, event, eventId, deps.clock.now());
    if (!result.changed) return 'unchanged';
    if (await deps.subjects.saveSubject(result.subject)) {
      const subject = result.subject;
      deps.log.info('KYC subject updated', {
        eventId,
        userReference: ref.userReference,
        phase: subject.phase,
        decision: subject.decision,
        awaitingConfirmation: needsConfirmation(subject),
      });
      if (result.newlyFlagged) {
        deps.telemetry.count(METRIC.kycDecisionChanged);
        deps.log.warn('KYC final decision changed after it was given; applied and flagged', {
          eventId,
          userReference: ref.userReference,
          decisions: subject.finalDecisionsSeen,
          decision: subject.decision,
        });
      }
      return 'applied';
    }
  }
  throw new ConcurrentModificationError(`KYC subject ${ref.userReference} kept changing; event ${eventId} left for redelivery`);
}

/**
 * Receives one KYC callback: authenticates the path token (constant time; one throttled re-read of
 * the secret on mismatch, since the token may just have been rotated), stores the body verbatim
 * once, then applies it to the subject. A redelivery is acknowledged and re-checked against the
 * projection, which heals a crash between store and apply without ever applying twice.
 * @throws WebhookUnauthorizedError on a wrong token (nothing is stored)
 */
export async function receiveKycCallback(deps: ReceiveKycCallbackDeps, request: KycCallbackRequest): Promise<WebhookReceipt> {
  let secret = await deps.secret.get();
  if (!secretsEqual(request.token, secret.callback_token)) {
    const fresh = await deps.secret.refresh();
    if (fresh === undefined || !secretsEqual(request.token, fresh.callback_token)) {
      throw new WebhookUnauthorizedError('token', 'KYC callback token does not match');
    }
    secret = fresh;
  }

  const recognition = recognizeKycCallback(request.payload);
  const { eventId, outcome, logKeys } = await storeCallback(deps, {
    source: 'kyc',
    label: 'KYC callback',
    body: request.body,
    payload: request.payload,
    recognition,
    sourceIp: request.sourceIp,
    keys: { appId: secret.app_id, userReference: recognition.recognized ? recognition.event.userReference : undefined },
  });
  if (!recognition.recognized) return { eventId, outcome, recognized: false };
  deps.log.info(outcome === 'stored' ? 'KYC callback stored' : 'KYC callback duplicate acknowledged', logKeys);
  await applyKycCallback(deps, secret.app_id, recognition.event, eventId);
  return { eventId, outcome, recognized: true };
}
