import { describe, expect, it } from 'vitest';
import { createKycOrder, KycOrderInputError, type CreateKycOrderDeps } from '@shared/app/create-kyc-order';
import { MAX_REFERENCE_LENGTH } from '@shared/domain/callbacks';
import { InvalidPhoneNumberError } from '@shared/domain/phone';
import { silentLog } from '@test/factories/ports';

/** Deps that fail the test if the use case reaches the secret, the KYC service or the store. */
const untouched = new Proxy({} as CreateKycOrderDeps, {
  get: (_target, name) => {
    throw new Error(`createKycOrder reached ${String(name)} for a reference it must refuse first`);
  },
});

const order = (reference: string) => createKycOrder(untouched, { kind: 'individual', reference, full_name: 'Ama Mensah', email: 'ama@example.com', phone: '+233200000000' });

describe('createKycOrder', () => {
  it('refuses, before the KYC service is asked, a user reference its callbacks could never be applied with', async () => {
    await expect(order(' ')).rejects.toThrow(new KycOrderInputError('reference (the user reference) is required'));
    await expect(order('u'.repeat(MAX_REFERENCE_LENGTH + 1))).rejects.toThrow(
      new KycOrderInputError(`reference (the user reference) is longer than ${MAX_REFERENCE_LENGTH} characters: its KYC callbacks could never be applied`),
    );
    await expect(order('user-\uD800')).rejects.toThrow(/^reference \(the user reference\) is not well-formed Unicode text \(lone surrogate\): its KYC callbacks could never be applied$/);
  });

  it('refuses, before the secret or the KYC service is asked, a phone number not in international form (a number without its country code)', async () => {
    for (const phone of ['12345', '0244000000', '233244000000']) {
      await expect(createKycOrder(untouched, { kind: 'individual', reference: 'user-1', full_name: 'Ama Mensah', email: 'ama@example.com', phone }), phone).rejects.toBeInstanceOf(
        InvalidPhoneNumberError,
      );
    }
  });

  it('sends the phone number as + and digits, the spaces and dashes it was written with dropped', async () => {
    const sent: unknown[] = [];
    const deps = {
      kyc: {
        getKycTypes: async () => [{ _id: 'type-1', name: 'Individual' }],
        createIndividualOrder: async (body: unknown) => {
          sent.push(body);
          return { _id: 'order-1', verification_url: 'https://kyc.example/journey/order-1' };
        },
      },
      orders: { putOrder: async () => undefined },
      secret: { get: async () => ({ app_id: 'app-1', callback_token: 't'.repeat(48) }) },
      apiBaseUrl: 'https://api.example',
      clock: { now: () => new Date('2026-11-20T10:00:00Z') },
      log: silentLog,
    } as unknown as CreateKycOrderDeps;
    await createKycOrder(deps, { kind: 'individual', reference: 'user-1', full_name: 'Ama Mensah', email: 'ama@example.com', phone: ' +233 24-400-0000 ' });
    expect(sent).toEqual([expect.objectContaining({ phone: '+233244000000', reference: 'user-1' })]);
  });
});
