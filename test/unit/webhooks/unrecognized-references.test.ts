import { describe, expect, it } from 'vitest';
import { MAX_REFERENCE_LENGTH, recognizeKycCallback, recognizeOrderNotification, referencesOfUnrecognized } from '@shared/domain/callbacks';
import { storeCallback } from '@shared/app/store-callback';
import type { EventStore, StoredEvent } from '@shared/ports/callbacks';
import { MovableClock, noTelemetry, silentLog } from '@test/factories/ports';

/*
 * An authentic callback payrelay does not recognize is still listed under the reference its body
 * names, read at the recognizer's own place and by its rules (stricter: no control or invisible
 * characters), so `events list --reference` and `kyc status` find it. Hostile bodies name nothing.
 */

/** A KYC callback in the documented shape whose kyc_status payrelay does not know. */
const onHold = (userReference: unknown): Record<string, unknown> => ({
  status: 'completed',
  event: 'applicantReviewed',
  user_reference: userReference,
  meta_data: { kyc_status: 'on_hold' },
});

/** An order notification naming a reference, with a shape payrelay does not recognize otherwise. */
const notification = (data: unknown): Record<string, unknown> => ({ status: 'ok', data, signature: 'x' });

describe('referencesOfUnrecognized', () => {
  it('reads the user_reference of a KYC callback with an unknown kyc_status, trimmed as the recognizer trims it', () => {
    expect(recognizeKycCallback(onHold('user-h8'), new Date())).toMatchObject({ recognized: false, reason: 'unknown kyc_status "on_hold"' });
    expect(referencesOfUnrecognized('kyc', onHold('user-h8'))).toEqual({ userReference: 'user-h8' });
    expect(referencesOfUnrecognized('kyc', onHold('  user-h8 \t'))).toEqual({ userReference: 'user-h8' });
    expect(referencesOfUnrecognized('kyc', { user_reference: 'user-9' })).toEqual({ userReference: 'user-9' });
  });

  it("reads an order notification's data.withdrawal_reference, else data.order_details.partner_order_id, never a KYC key", () => {
    expect(referencesOfUnrecognized('payout-notification', notification({ withdrawal_reference: 'WD-1', order_details: { partner_order_id: 'CO-1' } }))).toEqual({
      withdrawalReference: 'WD-1',
    });
    expect(referencesOfUnrecognized('payout-notification', notification({ order_details: { partner_order_id: 'CO-1' } }))).toEqual({ withdrawalReference: 'CO-1' });
    expect(referencesOfUnrecognized('payout-notification', { user_reference: 'user-1', withdrawal_reference: 'WD-1' })).toEqual({});
    expect(referencesOfUnrecognized('kyc', notification({ withdrawal_reference: 'WD-1' }))).toEqual({});
  });

  it('agrees with the recognizer on every reference it accepts', () => {
    for (const reference of ['user-1', ' x ', 'ü-✓-用户', 'a'.repeat(MAX_REFERENCE_LENGTH)]) {
      const recognized = recognizeKycCallback({ ...onHold(reference), meta_data: { kyc_status: 'approved' } }, new Date());
      expect(recognized.recognized && recognized.event.userReference).toBe(referencesOfUnrecognized('kyc', onHold(reference)).userReference);
      const notified = recognizeOrderNotification(notification({ withdrawal_reference: reference }));
      expect(notified.recognized && notified.event.withdrawalReference).toBe(referencesOfUnrecognized('payout-notification', notification({ withdrawal_reference: reference })).withdrawalReference);
    }
  });

  it('names nothing for a reference that is too long, however long, or not well-formed', () => {
    expect(referencesOfUnrecognized('kyc', onHold('a'.repeat(MAX_REFERENCE_LENGTH + 1)))).toEqual({});
    expect(referencesOfUnrecognized('kyc', onHold('u'.repeat(5_000_000)))).toEqual({});
    expect(referencesOfUnrecognized('kyc', onHold('user-\ud800'))).toEqual({});
    expect(referencesOfUnrecognized('payout-notification', notification({ withdrawal_reference: 'W'.repeat(400_000) }))).toEqual({});
  });

  it('names nothing for a reference of the wrong type, or a body of the wrong shape', () => {
    for (const value of [42, true, null, undefined, '', '   ', ['user-1'], { user: 'user-1' }, { toString: 'user-1' }]) {
      expect(referencesOfUnrecognized('kyc', onHold(value)), JSON.stringify(value) ?? 'undefined').toEqual({});
      expect(referencesOfUnrecognized('payout-notification', notification({ withdrawal_reference: value }))).toEqual({});
      expect(referencesOfUnrecognized('payout-notification', notification({ order_details: { partner_order_id: value } }))).toEqual({});
    }
    for (const body of [null, 'user-1', 12, [onHold('user-1')], notification('WD-1'), notification(['WD-1']), { data: null }]) {
      expect(referencesOfUnrecognized('kyc', body)).toEqual({});
      expect(referencesOfUnrecognized('payout-notification', body)).toEqual({});
    }
    // Nested where the recognizer does not look: not read.
    expect(referencesOfUnrecognized('kyc', { meta_data: { user_reference: 'user-1' } })).toEqual({});
    expect(referencesOfUnrecognized('payout-notification', { withdrawal_reference: 'WD-1' })).toEqual({});
  });

  it('names nothing for a reference with a control or invisible character (terminal escapes, forged lines, bidi overrides)', () => {
    for (const reference of ['user-\u001b[2Jh8', 'user-1\nuser-2', 'user\r-1', 'user-\u0000', 'user-\u007f', 'user-\u009b31m', 'user-\u202eh8', 'user\u200b-1', 'user\u2028-1', 'user-\u{e0041}']) {
      expect(referencesOfUnrecognized('kyc', onHold(reference)), JSON.stringify(reference)).toEqual({});
      expect(referencesOfUnrecognized('payout-notification', notification({ withdrawal_reference: reference })), JSON.stringify(reference)).toEqual({});
    }
  });

  it('reads an object without a prototype, and never what a __proto__ member holds', () => {
    const noPrototype = Object.assign(Object.create(null) as Record<string, unknown>, { user_reference: 'user-1' });
    expect(referencesOfUnrecognized('kyc', noPrototype)).toEqual({ userReference: 'user-1' });
    expect(referencesOfUnrecognized('kyc', JSON.parse('{"__proto__":{"user_reference":"user-1"}}'))).toEqual({});
  });
});

describe('storeCallback of an unrecognized callback', () => {
  async function stored(source: StoredEvent['source'], payload: unknown, keys: Pick<StoredEvent, 'appId' | 'userReference' | 'withdrawalReference'>, recognized = false) {
    const puts: StoredEvent[] = [];
    const events: EventStore = {
      putOnce: async (event) => {
        puts.push(event);
        return 'stored';
      },
      receivedBetween: () => (async function* () {})(),
    };
    await storeCallback(
      { events, retentionDays: 90, clock: new MovableClock(new Date('2026-11-22T10:00:00Z')), log: silentLog, telemetry: noTelemetry },
      {
        source,
        label: 'test callback',
        body: JSON.stringify(payload),
        payload,
        recognition: recognized ? { recognized: true, event: {} } : { recognized: false, reason: 'unknown kyc_status "on_hold"' },
        keys,
      },
    );
    expect(puts).toHaveLength(1);
    return puts[0] as StoredEvent;
  }

  it('stores it under the reference its body names, beside the app id, still unrecognized', async () => {
    const event = await stored('kyc', onHold('user-h8'), { appId: 'app-1', userReference: undefined });
    expect(event).toMatchObject({ recognized: false, unrecognizedReason: 'unknown kyc_status "on_hold"', appId: 'app-1', userReference: 'user-h8' });
    expect(event.withdrawalReference).toBeUndefined();
    expect(await stored('payout-notification', notification({ withdrawal_reference: 'WD-7' }), { withdrawalReference: undefined })).toMatchObject({
      withdrawalReference: 'WD-7',
    });
  });

  it('stores a hostile one under no reference, and leaves a recognized one with the keys its caller gave', async () => {
    expect((await stored('kyc', onHold('user-\u001b]0;pwned\u0007'), { appId: 'app-1' })).userReference).toBeUndefined();
    expect((await stored('kyc', onHold('user-h8'), { appId: 'app-1' }, true)).userReference).toBeUndefined();
  });
});
