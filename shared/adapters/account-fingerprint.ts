import { createHmac } from 'node:crypto';
import type { AccountFingerprints } from '@shared/ports/payouts';
import * as v from '@shared/validation/valibot';
import { SecretNotConfiguredError, cachedSecret } from './secrets';

/**
 * Thrown when the account key secret has no value: unlike the keys an operator puts, it is generated
 * by the data stack, so the way out is a deploy of that stack, not `payrelay secrets put`.
 */
export class AccountKeyMissingError extends Error {
  override name = 'AccountKeyMissingError';
  constructor(readonly secretId: string) {
    super(`the account key secret ${secretId} has no value: the data stack generates it; deploy it again (docs/deploy.md#secrets)`);
  }
}

/** The account key secret: at least 32 characters, as Secrets Manager generated it. */
const accountKeySchema = v.object({ key: v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters')) });

/** Bytes of the HMAC kept: 96 bits, so that two accounts never share one by chance, in 16 characters. */
const FINGERPRINT_BYTES = 12;

/** Bytes of the key id: enough to tell a replaced key from the one before it. */
const KEY_ID_BYTES = 3;

const hmac = (key: string, text: string): Buffer => createHmac('sha256', key).update(text).digest();

/** The id of the last key seen: a process has one key, so its id is computed once, not per payout. */
let knownKey: { key: string; id: string } | undefined;

function keyIdOf(key: string): string {
  if (knownKey?.key !== key) knownKey = { key, id: hmac(key, 'payrelay account key id v1').subarray(0, KEY_ID_BYTES).toString('base64url') };
  return knownKey.id;
}

/**
 * An account's fingerprint under `key`: `<key id>.<fingerprint>`, where the fingerprint is HMAC-SHA256
 * of a versioned label, the account code and the full number, cut to 16 base64url characters, and
 * the key id (4 characters) names the key it was made with. The label keeps this use of the key apart
 * from any other. Fingerprints are compared only under the same key id (sameAccount in
 * shared/domain/account.ts), so a key replaced by mistake makes stored fingerprints unknown, not false.
 */
export function accountFingerprint(key: string, account: { readonly account_code: string; readonly account_number: string }): string {
  const keyId = keyIdOf(key);
  const fingerprint = hmac(key, `payrelay account fingerprint v1\n${account.account_code}\n${account.account_number}`).subarray(0, FINGERPRINT_BYTES).toString('base64url');
  return `${keyId}.${fingerprint}`;
}

/**
 * Fingerprints under the key held in the secret `secretId`. The key never changes, so it is read
 * once per process, and the first payouts of a batch share that one read; a failed read is tried
 * again by the next call.
 */
export function accountFingerprintsFromSecret(secretId: string): AccountFingerprints {
  const secret = cachedSecret(secretId, accountKeySchema);
  let key: Promise<string> | undefined;
  return {
    async of(account) {
      key ??= secret.get().then(
        (value) => value.key,
        (error: unknown) => {
          key = undefined;
          throw error instanceof SecretNotConfiguredError ? new AccountKeyMissingError(secretId) : error;
        },
      );
      return accountFingerprint(await key, account);
    },
  };
}
