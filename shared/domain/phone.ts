import { InvalidPhoneNumberError } from './errors';

export { InvalidPhoneNumberError } from './errors';

/** How a phone number is written, for messages: `must be ${PHONE_NUMBER_FORM}`. */
export const PHONE_NUMBER_FORM =
  'in international form: + then the country code and the number, 8 to 15 digits in all, e.g. +233200000000 (spaces and dashes between them are allowed)';

/** `+`, a country code (never starting with 0), then the number: 8 to 15 digits in all (ITU-T E.164). */
const E164 = /^\+[1-9][0-9]{7,14}$/;

/**
 * A phone number as the KYC service takes it: E.164, `+` and digits only (`+233200000000`, the form
 * of its documents and of `kyc order create --phone`). Spaces and dashes, as people write numbers
 * (`+233 20 000 0000`, `+1-202-555-0143`), are dropped; anything else is refused: a number without
 * its country code (`0244123456`, `233200000000`) would reach the KYC journey as another number.
 * @throws InvalidPhoneNumberError, whose message does not quote the number (it is personal data)
 */
export function normalizePhoneNumber(text: string): string {
  const compact = text.trim().replace(/[ -]/g, '');
  if (!E164.test(compact)) throw new InvalidPhoneNumberError(`the phone number must be ${PHONE_NUMBER_FORM}`);
  return compact;
}
