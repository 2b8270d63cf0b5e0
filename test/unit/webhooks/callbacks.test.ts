import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  dedupeKey,
  MAX_CALLBACK_CLOCK_SKEW_MS,
  MAX_REFERENCE_LENGTH,
  normalizeTimestamp,
  recognizeKycCallback,
  recognizeOrderNotification,
  secretsEqual,
} from '@shared/domain/callbacks';
import { applyKycEvent, type KycSubject } from '@shared/domain/kyc-subject';

/** A callback in the documented shape ("Callback payload" in the KYC service's documentation). */
const documentedCallback = {
  status: 'completed',
  event: 'applicantReviewed',
  order: 'order-1',
  timestamp: '2026-11-22T09:02:00+01:00',
  kyc_token: '',
  account: 'acc-1',
  user_reference: 'user-1',
  meta_data: { kyc_note: 'Verification complete', kyc_status: 'approved' },
  first_name: 'Ama',
  last_name: '',
  phone: '',
  email: '',
  country: 'GHA',
};

describe('KYC callback recognition', () => {
  it('normalizes the documented shape: phase, decision, note, UTC time and user data', () => {
    const result = recognizeKycCallback(documentedCallback, new Date());
    expect(result).toEqual({
      recognized: true,
      event: {
        userReference: 'user-1',
        phase: 'completed',
        decision: 'approved',
        note: 'Verification complete',
        event: 'applicantReviewed',
        orderId: 'order-1',
        occurredAt: '2026-11-22T08:02:00.000Z',
        profile: { first_name: 'Ama', country: 'GHA' },
      },
    });
  });

  it('reads init as initiated and keeps a pre-completion decision at awaiting_approval', () => {
    const result = recognizeKycCallback({ ...documentedCallback, status: 'init', meta_data: { kyc_status: 'approved' } }, new Date());
    expect(result).toMatchObject({ recognized: true, event: { phase: 'initiated', decision: 'awaiting_approval' } });
  });

  it.each([
    ['not an object', [1, 2]],
    ['no user_reference', { ...documentedCallback, user_reference: '' }],
    ['an unknown status word', { ...documentedCallback, status: 'teleported' }],
    ['an unknown kyc_status', { ...documentedCallback, meta_data: { kyc_status: 'maybe' } }],
    ['a completed callback without a final decision', { ...documentedCallback, meta_data: { kyc_status: 'awaiting_approval' } }],
  ])('does not recognize %s, and says why', (_label, payload) => {
    const result = recognizeKycCallback(payload, new Date());
    expect(result.recognized).toBe(false);
    expect(result.recognized ? '' : result.reason).not.toBe('');
  });

  it.each([
    ['no user_reference', { ...documentedCallback, user_reference: undefined }, 'user_reference is missing'],
    ['an empty user_reference', { ...documentedCallback, user_reference: '  ' }, 'user_reference is empty'],
    ['a user_reference that is a number', { ...documentedCallback, user_reference: 233244123456 }, 'user_reference must be a string'],
    ['no status', { ...documentedCallback, status: undefined }, 'status is missing'],
    ['a status that is not a string', { ...documentedCallback, status: { word: 'completed' } }, 'status must be a string'],
    ['an unknown status word', { ...documentedCallback, status: 'teleported' }, 'unknown status "teleported"'],
  ])('names the field when it sees %s, never a value that is not a status word', (_label, payload, reason) => {
    expect(recognizeKycCallback(payload, new Date())).toEqual({ recognized: false, reason });
  });

  it('does not recognize a user_reference longer than the payout request allows, and keeps the reason short', () => {
    const result = recognizeKycCallback({ ...documentedCallback, user_reference: 'u'.repeat(MAX_REFERENCE_LENGTH + 1) }, new Date());
    expect(result).toEqual({ recognized: false, reason: `user_reference is longer than ${MAX_REFERENCE_LENGTH} characters` });
    const odd = recognizeKycCallback({ ...documentedCallback, status: 's'.repeat(100_000) }, new Date());
    expect(odd.recognized ? '' : odd.reason.length).toBeLessThan(80);
  });

  it('clips free text copied into the projection', () => {
    const result = recognizeKycCallback({ ...documentedCallback, meta_data: { kyc_status: 'approved', kyc_note: 'n'.repeat(50_000) } }, new Date());
    expect(result.recognized && result.event.note?.length).toBe(1000);
  });

  it('keeps an unparseable timestamp as empty, which orders before any real time', () => {
    expect(normalizeTimestamp('yesterday')).toBe('');
    expect(normalizeTimestamp(undefined)).toBe('');
  });

  it('does not believe a time more than the allowed clock skew after the callback was received: it counts as undated', () => {
    const receivedAt = new Date('2026-11-24T22:00:00.000Z');
    const at = (timestamp: string) => {
      const result = recognizeKycCallback({ ...documentedCallback, timestamp }, receivedAt);
      return result.recognized ? result.event.occurredAt : undefined;
    };
    expect(at('9999-12-31T23:59:59Z')).toBe('');
    expect(at(new Date(receivedAt.getTime() + MAX_CALLBACK_CLOCK_SKEW_MS + 1000).toISOString())).toBe('');
    // Within the skew, and any time before receipt, is the callback's own time.
    expect(at('2026-11-24T22:04:00Z')).toBe('2026-11-24T22:04:00.000Z');
    expect(at('2026-11-20T08:00:00Z')).toBe('2026-11-20T08:00:00.000Z');
  });

  it('a subject stored by an older version with an approval dated in the future is read as undated, so a later rejection wins', () => {
    const receivedAt = new Date('2026-11-24T22:00:00.000Z');
    const approval = recognizeKycCallback(documentedCallback, receivedAt);
    const rejection = recognizeKycCallback(
      { ...documentedCallback, timestamp: '2026-11-24T22:04:00Z', meta_data: { kyc_status: 'rejected', kyc_note: 'fraud' } },
      new Date('2026-11-24T22:04:01.000Z'),
    );
    if (!approval.recognized || !rejection.recognized) throw new Error('both are recognized callbacks');
    // What the older version stored: the approval's own time, 2099, believed.
    const stored = applyKycEvent(undefined, 'app-1', { ...approval.event, occurredAt: '2099-01-01T00:00:00.000Z' }, 'kyc#a', receivedAt).subject;
    expect(stored.position).toBe('2|2099-01-01T00:00:00.000Z|kyc#a');
    expect(applyKycEvent(stored, 'app-1', rejection.event, 'kyc#r', new Date('2026-11-24T22:04:01.000Z')).subject.decision).toBe('rejected');
  });

  it('an approval dated in the future does not outrank a later fraud rejection (undated approvals order first)', () => {
    const receivedAt = new Date('2026-11-24T22:00:00.000Z');
    const approval = recognizeKycCallback({ ...documentedCallback, timestamp: '9999-12-31T23:59:59Z' }, receivedAt);
    const rejection = recognizeKycCallback(
      { ...documentedCallback, timestamp: '2026-11-24T22:04:00Z', meta_data: { kyc_status: 'rejected', kyc_note: 'fraud' } },
      new Date('2026-11-24T22:04:01.000Z'),
    );
    if (!approval.recognized || !rejection.recognized) throw new Error('both are recognized callbacks');
    const inEitherOrder = [
      [
        [approval.event, 'kyc#a'],
        [rejection.event, 'kyc#r'],
      ],
      [
        [rejection.event, 'kyc#r'],
        [approval.event, 'kyc#a'],
      ],
    ] as const;
    for (const order of inEitherOrder) {
      let subject: KycSubject | undefined;
      for (const [event, id] of order) subject = applyKycEvent(subject, 'app-1', event, id, receivedAt).subject;
      expect(subject?.decision).toBe('rejected');
    }
  });
});

describe('order notification recognition', () => {
  it('finds the payout in data.withdrawal_reference', () => {
    const result = recognizeOrderNotification({ status: 'success', data: { withdrawal_reference: 'W-1', payment: { status: 'PAID' } } });
    expect(result).toEqual({
      recognized: true,
      event: { withdrawalReference: 'W-1', paymentStatus: 'PAID', orderPaymentStatus: 'PAID', orderStatus: undefined, partnerOrderId: undefined, orderReference: undefined },
    });
  });

  it('falls back to data.order_details.partner_order_id, which also names a collection', () => {
    const result = recognizeOrderNotification({
      status: 'success',
      data: { order_details: { partner_order_id: 'W-2', status: 'COMPLETED', order_reference: 'ORD-7' } },
    });
    expect(result).toEqual({
      recognized: true,
      event: { withdrawalReference: 'W-2', paymentStatus: 'success', orderPaymentStatus: undefined, orderStatus: 'COMPLETED', partnerOrderId: 'W-2', orderReference: 'ORD-7' },
    });
  });

  it('names no collection when data.withdrawal_reference says it is about a payout', () => {
    const result = recognizeOrderNotification({ data: { withdrawal_reference: 'W-3', order_details: { partner_order_id: 'W-3', status: 'COMPLETED' } } });
    expect(result).toMatchObject({ recognized: true, event: { withdrawalReference: 'W-3', partnerOrderId: undefined } });
  });

  it('does not recognize a withdrawal reference longer than a payout request allows', () => {
    const result = recognizeOrderNotification({ data: { withdrawal_reference: 'w'.repeat(MAX_REFERENCE_LENGTH + 1) } });
    expect(result.recognized).toBe(false);
  });

  it('does not recognize a notification that names no payout', () => {
    expect(recognizeOrderNotification({ status: 'success', data: { payment: { status: 'PAID' } } }).recognized).toBe(false);
    expect(recognizeOrderNotification({ status: 'success' }).recognized).toBe(false);
  });
});

describe('dedupe key', () => {
  it('is the same for the same content in any key order or spacing', () => {
    const a = JSON.parse('{"b":1,"a":{"y":[1,{"q":2,"p":1}],"x":"s"}}') as unknown;
    const b = JSON.parse('{ "a": { "x": "s", "y": [1, {"p": 1, "q": 2}] }, "b": 1 }') as unknown;
    expect(canonicalJson(a)).toBe('{"a":{"x":"s","y":[1,{"p":1,"q":2}]},"b":1}');
    expect(dedupeKey('kyc', a)).toBe(dedupeKey('kyc', b));
  });

  it('differs by source and by content', () => {
    expect(dedupeKey('kyc', { a: 1 })).not.toBe(dedupeKey('payout-notification', { a: 1 }));
    expect(dedupeKey('kyc', { a: 1 })).not.toBe(dedupeKey('kyc', { a: 2 }));
    expect(dedupeKey('kyc', { a: 1 })).toMatch(/^kyc#[0-9a-f]{64}$/);
  });
});

describe('secretsEqual', () => {
  it('matches equal secrets only, whatever the lengths', () => {
    expect(secretsEqual('token-aaaaaaaaaaaaaaaa', 'token-aaaaaaaaaaaaaaaa')).toBe(true);
    expect(secretsEqual('token-aaaaaaaaaaaaaaab', 'token-aaaaaaaaaaaaaaaa')).toBe(false);
    expect(secretsEqual('', 'token-aaaaaaaaaaaaaaaa')).toBe(false);
    expect(secretsEqual('token-aaaaaaaaaaaaaaaa-longer', 'token-aaaaaaaaaaaaaaaa')).toBe(false);
  });
});
