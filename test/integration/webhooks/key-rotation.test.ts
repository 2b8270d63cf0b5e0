import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCollectionRepository } from '@shared/adapters/collection-repository';
import { createEventStore } from '@shared/adapters/event-store';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { createQuarantineStore } from '@shared/adapters/quarantine-store';
import { previousSecret, providerSecretSchema } from '@shared/adapters/secrets';
import { previousCredentialsFrom } from '@shared/adapters/credentials';
import { receivePayoutNotification } from '@shared/app/receive-payout-notification';
import { WebhookUnauthorizedError } from '@shared/domain/errors';
import { logger } from '@shared/observability/logger';
import { credentialsFromSecret } from '@shared/providers/payout-client';
import { DEFAULT_SIGNING_PROFILE, withSignature } from '@shared/signing';
import { startReceiverStack, type ReceiverStack } from './receiver-stack';

/*
 * Key rotation without a gap: after new provider keys are put, a notification the provider signed
 * with the previous keys is still accepted for KEY_ROTATION_WINDOW_HOURS, read from the secret's
 * AWSPREVIOUS version (the local secrets stand-in moves the label on every put, as Secrets Manager does).
 */

let stack: ReceiverStack;

beforeAll(async () => {
  stack = await startReceiverStack({ stage: 'rotation', simulator: { notifyOnSettle: false } });
});

afterAll(async () => {
  await stack?.stop();
});

type Keys = ReceiverStack['partner'];

function notification(reference: string, keys: Keys): string {
  const body = { status: 'success', message: 'Order notification', data: { payment: { status: 'PAID' }, order_details: { partner_order_id: reference } } };
  return JSON.stringify(withSignature(body, 'orderNotification', { partnerSecret: keys.partner_secret_key, merchantSecret: keys.merchant_secret_key }));
}

async function post(body: string, keys: Keys): Promise<number> {
  const response = await fetch(`${stack.gateway.url}/callbacks/payout-notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.partner_public_key}` },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

async function rotate(): Promise<Keys> {
  const fresh = { ...stack.partner, ...stack.sim.admin.resetPartnerKeys('P-rotation') };
  await stack.putProviderSecret(fresh);
  return fresh;
}

describe('key rotation without a gap', () => {
  it('accepts a notification signed with the previous keys during the window, logging it, and the new keys too', async () => {
    const old = stack.partner;
    expect(await post(notification('K-before', old), old)).toBe(200);
    const fresh = await rotate();
    // The first notification with the new keys makes the receiver re-read the secret...
    expect(await post(notification('K-new-keys', fresh), fresh)).toBe(200);
    // ...after which one still signed with the replaced keys is accepted through AWSPREVIOUS.
    const info = vi.spyOn(logger, 'info');
    try {
      expect(await post(notification('K-old-keys', old), old)).toBe(200);
      expect(info).toHaveBeenCalledWith('order notification verified with previous keys', expect.objectContaining({ rotatedAt: expect.any(String) }));
    } finally {
      info.mockRestore();
    }
    const stored = (await stack.scan(stack.local.names.eventsTable)).map((e) => e.withdrawalReference);
    expect(stored).toEqual(expect.arrayContaining(['K-before', 'K-old-keys', 'K-new-keys']));
    stack.partner = fresh;
  });

  it('stops accepting the previous keys once the window has passed, and keys two rotations old at all', async () => {
    const previous = stack.partner;
    const current = await rotate();
    const secretId = stack.local.names.providerSecret;
    const hour = 3_600_000;
    // The use case with fresh reads of the secret and a clock moved past the rotation.
    const deps = (keys: Keys, hoursAfterRotation: number, windowHours = 24) => ({
      events: createEventStore({ tableName: stack.local.names.eventsTable, client: stack.doc }),
      payouts: createPayoutRepository(stack.local.names.payoutsTable, stack.doc),
      collections: createCollectionRepository({ tableName: stack.local.names.collectionsTable, client: stack.doc }),
      credentials: { get: async () => credentialsFromSecret(keys), refresh: async () => undefined },
      previousCredentials: previousCredentialsFrom(previousSecret(secretId, providerSecretSchema)),
      rotationWindowMs: windowHours * hour,
      signingProfile: DEFAULT_SIGNING_PROFILE,
      quarantine: createQuarantineStore({ tableName: stack.local.names.quarantineTable, client: stack.doc }),
      quarantineSettings: { maxPerHour: 100, retentionDays: 1, nudgeEveryMinutes: 15 },
      retentionDays: 1,
      clock: { now: () => new Date(Date.now() + hoursAfterRotation * hour) },
      log: logger,
      telemetry: { count: () => {}, seconds: () => {} },
    });
    const request = (reference: string, keys: Keys) => {
      const body = notification(reference, keys);
      return { authorization: keys.partner_public_key, body, payload: JSON.parse(body) as unknown };
    };
    await expect(receivePayoutNotification(deps(current, 23), request('K-23h', previous))).resolves.toMatchObject({ outcome: 'stored' });
    await expect(receivePayoutNotification(deps(current, 25), request('K-25h', previous))).rejects.toBeInstanceOf(WebhookUnauthorizedError);

    const newest = await rotate();
    await expect(receivePayoutNotification(deps(newest, 1), request('K-two-ago', previous))).rejects.toBeInstanceOf(WebhookUnauthorizedError);
    // KEY_ROTATION_WINDOW_HOURS=0: the previous keys verify nothing, even just after the rotation.
    await expect(receivePayoutNotification(deps(newest, 0.01, 0), request('K-window-off', current))).rejects.toBeInstanceOf(WebhookUnauthorizedError);
    await expect(receivePayoutNotification(deps(newest, 1), request('K-one-ago', current))).resolves.toMatchObject({ outcome: 'stored' });
    stack.partner = newest;
  });
});
