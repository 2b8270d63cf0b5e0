import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { useLocalAws } from '@test/support/local-aws';

const local = useLocalAws({ stage: 'acctkey' });

describe('the account key secret, read through the secrets stand-in', () => {
  it('fingerprints under the generated key, and says how to get the key back when the secret has no value', async () => {
    const { accountFingerprintsFromSecret, AccountKeyMissingError } = await import('@shared/adapters/account-fingerprint');
    const account = { account_code: 'MTN', account_number: '0244123456' };
    const fingerprints = accountFingerprintsFromSecret(local().env.ACCOUNT_KEY_SECRET_ID as string);
    const first = await fingerprints.of(account);
    expect(first).toMatch(/^[A-Za-z0-9_-]{4}\.[A-Za-z0-9_-]{16}$/);
    expect(await fingerprints.of({ ...account })).toBe(first);

    const { secretsClient } = await import('@shared/adapters/secrets-manager-client');
    await secretsClient.send(new CreateSecretCommand({ Name: 'payrelay-acctkey-account-key-empty' }));
    const missing = accountFingerprintsFromSecret('payrelay-acctkey-account-key-empty');
    await expect(missing.of(account)).rejects.toBeInstanceOf(AccountKeyMissingError);
    await expect(missing.of(account)).rejects.toThrow(/has no value: the data stack generates it; deploy it again/);
  });
});
