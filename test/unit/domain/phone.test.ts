import { describe, expect, it } from 'vitest';
import { DomainError } from '@shared/domain/errors';
import { InvalidPhoneNumberError, normalizePhoneNumber } from '@shared/domain/phone';

describe('normalizePhoneNumber (E.164, as the KYC service takes it)', () => {
  it('takes + with 8 to 15 digits, dropping the spaces and dashes people write numbers with', () => {
    expect(normalizePhoneNumber('+233200000000')).toBe('+233200000000');
    expect(normalizePhoneNumber(' +233 20 000 0000 ')).toBe('+233200000000');
    expect(normalizePhoneNumber('+1-202-555-0143')).toBe('+12025550143');
    expect(normalizePhoneNumber('+12345678')).toBe('+12345678');
    expect(normalizePhoneNumber('+123456789012345')).toBe('+123456789012345');
  });

  it('refuses a number without its country code or of another length, and anything but digits, spaces and dashes, without quoting it', () => {
    for (const wrong of ['12345', '0244123456', '233200000000', '+1234567', '+1234567890123456', '+0233200000000', '+233 (20) 000 0000', '+233.20.000.0000', '++233200000000', '+', '', 'ama@example.com']) {
      const error = (() => {
        try {
          normalizePhoneNumber(wrong);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, wrong).toBeInstanceOf(InvalidPhoneNumberError);
      expect(error, wrong).toBeInstanceOf(DomainError);
      expect((error as Error).message).toBe(
        'the phone number must be in international form: + then the country code and the number, 8 to 15 digits in all, e.g. +233200000000 (spaces and dashes between them are allowed)',
      );
    }
  });
});
