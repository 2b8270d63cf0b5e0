import { recognizeOrderNotification, secretsEqual } from '@shared/domain/callbacks';
import { MalformedWebhookError, WebhookUnauthorizedError, type UnauthorizedReason } from '@shared/domain/errors';
import { cutTopLevelMember, verifyPayload, verifySignedText, type SigningProfile } from '@shared/signing';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import type { ProviderCredentials } from '@shared/ports/payouts';
import { quarantineMismatch, type QuarantineSettings } from './quarantine';
import type { QuarantineStore } from '@shared/ports/quarantine';
import { storeCallback } from './store-callback';
import type { EventStore, PayoutNudge, WebhookReceipt } from '@shared/ports/callbacks';
import type { PreviousSecret, RefreshableSecret } from '@shared/ports/secrets';

/** The provider keys a notification is checked with. */
export type NotificationKeys = Pick<ProviderCredentials, 'partnerPublicKey' | 'partnerSecretKey' | 'merchantSecretKey'>;

export interface ReceivePayoutNotificationDeps {
  events: EventStore;
  /** Only the quarantine's throttled nudge; an authentic notification's nudge is the applier's. */
  payouts: PayoutNudge;
  credentials: RefreshableSecret<NotificationKeys>;
  /** The keys the last rotation replaced, accepted for `rotationWindowMs` after it. */
  previousCredentials: PreviousSecret<NotificationKeys>;
  rotationWindowMs: number;
  signingProfile: SigningProfile;
  quarantine: QuarantineStore;
  quarantineSettings: QuarantineSettings;
  retentionDays: number;
  clock: Clock;
  log: Log;
  telemetry: Telemetry;
}

/** One order notification as the handler hands it over. */
export interface PayoutNotificationRequest {
  /** The Authorization header as sent (`<key>` or `Bearer <key>`), absent when missing. */
  authorization?: string;
  body: string;
  payload: unknown;
  sourceIp?: string;
}

const BEARER = /^bearer\s+/i;


/** The signature a notification carries and the text it signs: the received body without it. */
interface SignedNotification {
  signature: string;
  signedText: string;
}

/**
 * Finds the one top-level `signature` of the body as received and the text it signs (the body
 * with that member cut out as text). Hostile shapes are refused before any key is used.
 * @throws MalformedWebhookError when the signature is missing at the top level, repeated, or not a non-empty string
 */
function signedNotification(body: string): SignedNotification {
  const cut = cutTopLevelMember(body, 'signature');
  if (cut.kind === 'absent' || cut.kind === 'not-object') {
    throw new MalformedWebhookError('an order notification must carry a top-level signature (one inside a nested object does not count)');
  }
  if (cut.kind === 'repeated') {
    throw new MalformedWebhookError(`signature appears ${cut.count} times at the top level; exactly one is expected`);
  }
  const signature: unknown = JSON.parse(cut.valueText);
  if (typeof signature !== 'string' || signature.trim() === '') {
    throw new MalformedWebhookError('signature must be a non-empty string');
  }
  return { signature, signedText: cut.text };
}

/**
 * Why these keys do not authenticate the notification, or undefined when they do. The signature is
 * checked over the text as received first (a provider that signs the bytes it sends, whatever its
 * escapes, number spellings or spacing), then over the profile's re-serialization of the body.
 */
function mismatch(
  request: PayoutNotificationRequest,
  payload: object,
  signed: SignedNotification,
  keys: NotificationKeys,
  profile: SigningProfile,
): UnauthorizedReason | undefined {
  // The provider's docs show the key both with and without the Bearer prefix: accept either.
  const presentedKey = (request.authorization ?? '').trim().replace(BEARER, '');
  if (!secretsEqual(presentedKey, keys.partnerPublicKey)) return 'authorization-header';
  const secrets = { partnerSecret: keys.partnerSecretKey, merchantSecret: keys.merchantSecretKey };
  if (verifySignedText(signed.signedText, signed.signature, 'orderNotification', secrets, profile)) return undefined;
  if (verifyPayload(payload, 'orderNotification', secrets, profile)) return undefined;
  return 'signature';
}

/**
 * After the current keys failed: tries the keys the last rotation replaced, if it happened less than
 * `rotationWindowMs` ago, so notifications the provider signed before it switched are not lost.
 * Returns undefined when they authenticate the notification, else the more telling reason.
 */
async function withPreviousKeys(
  deps: ReceivePayoutNotificationDeps,
  check: (keys: NotificationKeys) => UnauthorizedReason | undefined,
  reason: UnauthorizedReason,
): Promise<UnauthorizedReason | undefined> {
  const previous = await deps.previousCredentials.get();
  if (previous === undefined) return reason;
  const sinceRotationMs = deps.clock.now().getTime() - previous.replacedAt.getTime();
  if (sinceRotationMs < 0 || sinceRotationMs >= deps.rotationWindowMs) return reason;
  const previousReason = check(previous.value);
  if (previousReason === undefined) {
    deps.log.info('order notification verified with previous keys', {
      rotatedAt: previous.replacedAt.toISOString(),
      windowEndsAt: new Date(previous.replacedAt.getTime() + deps.rotationWindowMs).toISOString(),
    });
    return undefined;
  }
  // The partner key matched one of the two key sets: the signature is what failed.
  return reason === 'signature' || previousReason === 'signature' ? 'signature' : reason;
}

/**
 * Receives one order notification from the payout service: checks the Authorization key and the
 * signature (re-reading the provider secret once, throttled, when they do not match, since keys may
 * just have been reset) and stores the body verbatim once; that is all before the 200. The callback
 * applier then makes the payout it names due for reconciliation now and applies it to the
 * collection it names (apply-callback.ts); it never changes a payout's state: GetPayout decides. A notification with
 * the right Authorization key but a signature that matches no scheme is quarantined (see
 * quarantineMismatch) and refused.
 * @throws MalformedWebhookError when the body is not a JSON object with exactly one top-level string signature
 * @throws WebhookUnauthorizedError on a wrong key or signature (nothing is stored)
 */
export async function receivePayoutNotification(
  deps: ReceivePayoutNotificationDeps,
  request: PayoutNotificationRequest,
): Promise<WebhookReceipt> {
  const payload = request.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new MalformedWebhookError('an order notification must be a JSON object carrying a signature');
  }
  const signed = signedNotification(request.body);
  const check = (keys: NotificationKeys) => mismatch(request, payload, signed, keys, deps.signingProfile);
  let reason = check(await deps.credentials.get());
  if (reason !== undefined) {
    const fresh = await deps.credentials.refresh();
    if (fresh !== undefined) reason = check(fresh);
  }
  if (reason !== undefined) reason = await withPreviousKeys(deps, check, reason);
  if (reason === 'signature') {
    // The partner key is right, the signature is not: perhaps a scheme payrelay is not set up for.
    // Keep it to learn from, never apply it.
    await quarantineMismatch(
      { ...deps, settings: deps.quarantineSettings },
      { body: request.body, payload, sourceIp: request.sourceIp },
    );
  }
  if (reason !== undefined) {
    throw new WebhookUnauthorizedError(
      reason,
      reason === 'signature' ? 'order notification signature does not match' : 'order notification Authorization key does not match',
    );
  }

  const recognition = recognizeOrderNotification(payload);
  const { eventId, outcome, logKeys } = await storeCallback(deps, {
    source: 'payout-notification',
    label: 'order notification',
    body: request.body,
    payload,
    recognition,
    sourceIp: request.sourceIp,
    keys: { withdrawalReference: recognition.recognized ? recognition.event.withdrawalReference : undefined },
  });
  if (!recognition.recognized) return { eventId, outcome, recognized: false };
  deps.log.info(outcome === 'stored' ? 'order notification stored; the applier applies it' : 'order notification duplicate acknowledged', {
    ...logKeys,
    paymentStatus: recognition.event.paymentStatus,
  });
  return { eventId, outcome, recognized: true };
}
