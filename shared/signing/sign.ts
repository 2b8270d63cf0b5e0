import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  DEFAULT_SIGNING_PROFILE,
  SigningProfileError,
  type BodySerialization,
  type SecretRole,
  type SigningOperation,
  type SigningProfile,
  type SigningSecrets,
} from './profile';

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  if (value !== null && typeof value === 'object') {
    const source = value as Record<string, unknown>;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(source).sort()) {
      sorted[key] = sortKeys(source[key]);
    }
    return sorted;
  }
  return value;
}

/**
 * The exact string that is signed: the body without its top-level `signature` field, as compact
 * JSON. "Insertion" order is the JavaScript property order, which puts integer-like keys first.
 */
export function serializeForSigning(body: object, serialization: BodySerialization): string {
  const { signature: _signature, ...unsigned } = body as Record<string, unknown>;
  return JSON.stringify(serialization === 'compact-sorted' ? sortKeys(unsigned) : unsigned);
}

/** The key for an operation: the secrets of its recipe concatenated with no separator. */
export function signingKey(roles: readonly SecretRole[], secrets: SigningSecrets): string {
  return roles
    .map((role) => {
      const secret = role === 'merchant' ? secrets.merchantSecret : secrets.partnerSecret;
      if (typeof secret !== 'string' || secret.length === 0) {
        throw new SigningProfileError(`the ${role} secret is empty but the signing profile needs it`);
      }
      return secret;
    })
    .join('');
}

/** Signs a serialized body with a ready key; shared by `signPayload` and calibration. */
export function digest(profile: Omit<SigningProfile, 'name' | 'keys'>, key: string, serialized: string): string {
  if (profile.algorithm === 'hmac-sha512') {
    return createHmac('sha512', key).update(serialized, 'utf8').digest(profile.encoding);
  }
  const input = profile.algorithm === 'sha512-secret-body' ? key + serialized : serialized + key;
  return createHash('sha512').update(input, 'utf8').digest(profile.encoding);
}

/**
 * The signature of `body` (its `signature` field, if any, is left out) for one operation.
 * @throws SigningProfileError when a secret the profile needs is empty.
 */
export function signPayload(
  body: object,
  operation: SigningOperation,
  secrets: SigningSecrets,
  profile: SigningProfile = DEFAULT_SIGNING_PROFILE,
): string {
  const key = signingKey(profile.keys[operation], secrets);
  return digest(profile, key, serializeForSigning(body, profile.serialization));
}

/** A copy of `body` with `signature` set last (after any existing one is dropped). */
export function withSignature<T extends object>(
  body: T,
  operation: SigningOperation,
  secrets: SigningSecrets,
  profile: SigningProfile = DEFAULT_SIGNING_PROFILE,
): T & { signature: string } {
  const { signature: _old, ...rest } = body as T & { signature?: unknown };
  return { ...rest, signature: signPayload(body, operation, secrets, profile) } as T & { signature: string };
}

/** Constant-time comparison of a presented signature with the expected one; hex ignores case. */
function sameSignature(given: string, expected: string, encoding: SigningProfile['encoding']): boolean {
  const a = Buffer.from(encoding === 'hex' ? given.toLowerCase() : given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * True only when `body.signature` is a string equal to the signature the profile gives the rest
 * of the body. Compares in constant time; hex is compared case-insensitively. Never throws for a
 * bad body: a missing, non-string or wrong-length signature is simply false.
 */
export function verifyPayload(
  body: object,
  operation: SigningOperation,
  secrets: SigningSecrets,
  profile: SigningProfile = DEFAULT_SIGNING_PROFILE,
): boolean {
  const given = (body as { signature?: unknown }).signature;
  if (typeof given !== 'string' || given.length === 0) {
    return false;
  }
  let expected: string;
  try {
    expected = signPayload(body, operation, secrets, profile);
  } catch {
    return false;
  }
  return sameSignature(given, expected, profile.encoding);
}

/**
 * True when `signature` is the profile's signature (algorithm, encoding, key recipe) of `signedText`
 * taken as is: for a sender that signs the exact text it sends, whatever its escapes, number
 * spellings or spacing. The profile's serialization is not used. Never throws.
 */
export function verifySignedText(
  signedText: string,
  signature: string,
  operation: SigningOperation,
  secrets: SigningSecrets,
  profile: SigningProfile = DEFAULT_SIGNING_PROFILE,
): boolean {
  if (signature.length === 0) return false;
  let expected: string;
  try {
    expected = digest(profile, signingKey(profile.keys[operation], secrets), signedText);
  } catch {
    return false;
  }
  return sameSignature(signature, expected, profile.encoding);
}
