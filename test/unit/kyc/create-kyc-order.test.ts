import { describe, expect, it } from 'vitest';
import { createKycOrder, KycOrderInputError, type CreateKycOrderDeps } from '@shared/app/create-kyc-order';
import { MAX_REFERENCE_LENGTH } from '@shared/domain/callbacks';

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
});
