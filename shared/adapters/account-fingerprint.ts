import { createHmac } from 'node:crypto';
import type { AccountFingerprints } from '@shared/ports/payouts';
import * as v from '@shared/validation/valibot';
import { cachedSecret } from './secrets';

/** The account key secret: at least 32 characters, as Secrets Manager generated it. */
const accountKeySchema = v.object({ key: v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters')) });

/** Keeps the key for an hour: it never changes (resources.ts, ACCOUNT_KEY_SECRET). */
const KEY_MAX_AGE_SECONDS = 3600;

/** Bytes of the HMAC kept: 96 bits, so that two accounts never share one by chance, in 16 characters. */
const FINGERPRINT_BYTES = 12;

/**
 * An account's fingerprint under `key`: HMAC-SHA256 of a versioned label, the account code and the
 * full number, cut to 16 base64url characters. The label keeps this use of the key apart from any other.
 */
export function accountFingerprint(key: string, account: { readonly account_code: string; readonly account_number: string }): string {
  return createHmac('sha256', key)
    .update(`payrelay account fingerprint v1\n${account.account_code}\n${account.account_number}`)
    .digest()
    .subarray(0, FINGERPRINT_BYTES)
    .toString('base64url');
}

/** Fingerprints under the key held in the secret `secretId` (read once, then cached). */
export function accountFingerprintsFromSecret(secretId: string): AccountFingerprints {
  const secret = cachedSecret(secretId, accountKeySchema, KEY_MAX_AGE_SECONDS);
  return {
    async of(account) {
      return accountFingerprint((await secret.get()).key, account);
    },
  };
}
