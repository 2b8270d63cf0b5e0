import { recognizeKycCallback, secretsEqual } from '@shared/domain/callbacks';
import { WebhookUnauthorizedError } from '@shared/domain/errors';
import { storeCallback, type StoreCallbackDeps } from './store-callback';
import type { WebhookReceipt } from '@shared/ports/callbacks';
import type { RefreshableSecret } from '@shared/ports/secrets';

/** The part of the KYC secret the receiver reads. */
export interface KycCallbackSecret {
  app_id: string;
  callback_token: string;
}

export interface ReceiveKycCallbackDeps extends StoreCallbackDeps {
  secret: RefreshableSecret<KycCallbackSecret>;
}

/** One KYC callback as the handler hands it over: the path token, the verbatim body and its parse. */
export interface KycCallbackRequest {
  token: string;
  body: string;
  payload: unknown;
  sourceIp?: string;
}

/**
 * Receives one KYC callback: authenticates the path token (constant time; one throttled re-read of
 * the secret on mismatch, since the token may just have been rotated) and stores the body verbatim
 * once; that is all before the 200. The callback applier applies it to the subject afterwards
 * (apply-callback.ts). A redelivery is acknowledged as a duplicate: the stored event is applied, or
 * waits in the not-yet-applied index for the applier, whichever delivery brought it.
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

  const recognition = recognizeKycCallback(request.payload, deps.clock.now());
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
  deps.log.info(outcome === 'stored' ? 'KYC callback stored; the applier applies it' : 'KYC callback duplicate acknowledged', logKeys);
  return { eventId, outcome, recognized: true };
}
