import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { GetSecretValueCommand, ResourceNotFoundException } from '@aws-sdk/client-secrets-manager';
import type { PreviousSecret } from '@shared/ports/secrets';
import * as v from '@shared/validation/valibot';
import { secretsClient } from './secrets-manager-client';

/** Thrown when a secret exists but its JSON does not have the fields payrelay needs. */
export class SecretFormatError extends Error {
  override name = 'SecretFormatError';
}

/**
 * Thrown when a secret has no value yet (created empty by the deploy, before `payrelay secrets
 * put`) or does not exist: payrelay is not configured, which is neither bad input nor a bug.
 */
export class SecretNotConfiguredError extends Error {
  override name = 'SecretNotConfiguredError';
  constructor(readonly secretId: string) {
    super(`secret ${secretId} has no value yet: put it with \`payrelay secrets put\` (docs/deploy.md#secrets)`);
  }
}

/** Secrets Manager's answer for a secret without a current value (or without the secret), through Powertools' wrapper. */
function isMissingValue(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { name?: string } | undefined) : undefined;
  return cause?.name === 'ResourceNotFoundException' || (error as { name?: string } | undefined)?.name === 'ResourceNotFoundException';
}

const secretsProvider = new SecretsProvider({ awsSdkV3Client: secretsClient });

/** A secret read through Powertools parameters, cached in memory for `maxAgeSeconds`. */
export interface CachedSecret<T> {
  /** `forceFetch` bypasses the cache: use it once after a 401, since a key reset invalidates old keys. */
  get(options?: { forceFetch?: boolean }): Promise<T>;
}

/**
 * Builds a cached, schema-checked reader for one JSON secret. The error names the secret and the
 * missing field names, never a value.
 */
export function cachedSecret<T>(secretId: string, schema: v.GenericSchema<unknown, T>, maxAgeSeconds = 300): CachedSecret<T> {
  return {
    async get(options) {
      let raw: unknown;
      try {
        raw = await secretsProvider.get(secretId, {
          transform: 'json',
          maxAge: maxAgeSeconds,
          forceFetch: options?.forceFetch ?? false,
        });
      } catch (error) {
        if (isMissingValue(error)) throw new SecretNotConfiguredError(secretId);
        throw error;
      }
      const parsed = v.safeParse(schema, raw);
      if (!parsed.success) {
        throw new SecretFormatError(`secret ${secretId} is not valid: ${v.describeIssues(parsed.issues)}; put it again with \`payrelay secrets put\``);
      }
      return parsed.output;
    },
  };
}

/**
 * The previous value of a JSON secret (its AWSPREVIOUS version: Secrets Manager moves that label to
 * the replaced version on every put) with the time it was replaced, cached for `maxAgeSeconds`.
 * Used only after a mismatch, so keys can overlap for a window after a rotation.
 */
export function previousSecret<T>(secretId: string, schema: v.GenericSchema<unknown, T>, maxAgeSeconds = 300): PreviousSecret<T> {
  let cached: { at: number; value: { value: T; replacedAt: Date } | undefined } | undefined;
  const read = async (): Promise<{ value: T; replacedAt: Date } | undefined> => {
    const stage = async (VersionStage: string) => {
      try {
        return await secretsClient.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage }));
      } catch (error) {
        if (error instanceof ResourceNotFoundException) return undefined;
        throw error;
      }
    };
    const [current, previous] = await Promise.all([stage('AWSCURRENT'), stage('AWSPREVIOUS')]);
    if (current?.CreatedDate === undefined || previous?.SecretString === undefined) return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(previous.SecretString);
    } catch {
      return undefined;
    }
    const parsed = v.safeParse(schema, raw);
    return parsed.success ? { value: parsed.output, replacedAt: current.CreatedDate } : undefined;
  };
  return {
    async get() {
      const now = Date.now();
      if (cached === undefined || now - cached.at > maxAgeSeconds * 1000) cached = { at: now, value: await read() };
      return cached.value;
    },
  };
}

/**
 * A secret field as the provider issued it: text with nothing around it. A key pasted with a space
 * or a line break at either end would be stored and used as given, and every signed call refused
 * (401) without saying why; spaces alone are an empty field. The messages never quote the value.
 */
const secretText = v.pipe(
  v.string(),
  v.check(
    (text: string) => text !== '' && text === text.trim(),
    (issue) => (String(issue.input).trim() === '' ? 'is empty' : 'has spaces or line breaks at its start or end (a copy-paste slip?)'),
  ),
);

/** Provider secret: see PROVIDER_SECRET in @shared/config/resources. */
export const providerSecretSchema = v.object({
  partner_public_key: secretText,
  partner_secret_key: secretText,
  merchant_secret_key: secretText,
  partner_id: secretText,
  platform_merchant_id: secretText,
});
export type ProviderSecret = v.InferOutput<typeof providerSecretSchema>;

/** KYC secret: the KYC app id and the unguessable token in the KYC callback URL. */
export const kycSecretSchema = v.object({
  app_id: secretText,
  callback_token: v.pipe(secretText, v.minLength(16, 'must be at least 16 characters')),
});
export type KycSecret = v.InferOutput<typeof kycSecretSchema>;
