import { describe, expect, it } from 'vitest';
import { interpretResponse } from '@shared/providers/http';
import { ProviderRejectedError } from '@shared/providers/provider-errors';

/** The refusal interpretResponse makes of an answer, or a failure of the test when it makes none. */
function refusal(status: number, text: string): ProviderRejectedError {
  try {
    interpretResponse({ status, text }, 'payout', []);
  } catch (error) {
    if (error instanceof ProviderRejectedError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('a refusal that says the reference is already held (duplicateReference)', () => {
  it.each([
    [200, '{"success":false,"message":"reference has been used"}'],
    [400, '{"success":false,"message":"Withdrawal reference has already been used"}'],
    [400, '{"success":false,"message":"reference already in use"}'],
    [400, '{"success":false,"message":"this reference is already in use"}'],
    [422, '{"error":"Duplicate withdrawal_reference"}'],
    [400, '{"message":"reference already exists"}'],
    [409, '{"message":"conflict"}'],
  ])('HTTP %i %s', (status, text) => {
    expect(refusal(status, text).duplicateReference).toBe(true);
  });

  it.each([
    [400, '{"success":false,"message":"account not found"}'],
    [400, '{"success":false,"message":"Transaction could not be processed"}'],
    [200, '{"success":false,"message":"insufficient balance"}'],
    [400, '{"success":false}'],
  ])('not for other words: HTTP %i %s', (status, text) => {
    expect(refusal(status, text).duplicateReference).toBe(false);
  });
});
