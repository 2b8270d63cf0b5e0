import { SettingError } from '@shared/domain/errors';
import { parseJsonObject } from '@shared/domain/json-object';

/** How the digest is made: a keyed HMAC, or a plain SHA-512 over the key and the body concatenated. */
export type SigningAlgorithm = 'hmac-sha512' | 'sha512-secret-body' | 'sha512-body-secret';
/** How the body (without `signature`) becomes bytes: compact JSON in property order, or with keys sorted recursively. */
export type BodySerialization = 'compact-insertion' | 'compact-sorted';
export type SignatureEncoding = 'hex' | 'base64';
export type SigningOperation = 'accountVerification' | 'payout' | 'orderNotification' | 'collectionOrder';
export type SecretRole = 'merchant' | 'partner';

/** A complete signing scheme. `keys[op]` lists the secrets concatenated (no separator) to form the key. */
export interface SigningProfile {
  name: string;
  algorithm: SigningAlgorithm;
  serialization: BodySerialization;
  encoding: SignatureEncoding;
  keys: Record<SigningOperation, SecretRole[]>;
}

export interface SigningSecrets {
  partnerSecret: string;
  merchantSecret: string;
}

/** Thrown when SIGNING_PROFILE (or a profile built in code) is not a valid profile, or a secret it needs is empty. */
export class SigningProfileError extends SettingError {
  override name = 'SigningProfileError';
}

export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['hmac-sha512', 'sha512-secret-body', 'sha512-body-secret'];
export const BODY_SERIALIZATIONS: readonly BodySerialization[] = ['compact-insertion', 'compact-sorted'];
export const SIGNATURE_ENCODINGS: readonly SignatureEncoding[] = ['hex', 'base64'];
export const SIGNING_OPERATIONS: readonly SigningOperation[] = [
  'accountVerification',
  'payout',
  'orderNotification',
  'collectionOrder',
];
/** Key recipes calibration tries, in the order it reports them. */
export const KEY_RECIPES: readonly SecretRole[][] = [['partner'], ['merchant'], ['merchant', 'partner'], ['partner', 'merchant']];

// The payout service's documented recipe: Payout and notifications are signed with the merchant secret
// then the partner secret; AccountVerification with the partner secret alone (docs/signing.md).
const DEFAULT_KEYS: Record<SigningOperation, SecretRole[]> = {
  accountVerification: ['partner'],
  payout: ['merchant', 'partner'],
  orderNotification: ['merchant', 'partner'],
  collectionOrder: ['merchant', 'partner'],
};

const recipeName = (roles: readonly SecretRole[]): string => roles.join('+');

const sameRecipe = (a: readonly SecretRole[], b: readonly SecretRole[]): boolean =>
  a.length === b.length && a.every((role, i) => role === b[i]);

/**
 * The canonical name of a profile: `<algorithm>/<serialization>/<encoding>`, followed by
 * `/<operation>=<recipe>` for each operation whose key recipe differs from the documented one. The name
 * alone rebuilds the profile, so it can be put in SIGNING_PROFILE as is.
 */
export function profileName(profile: Omit<SigningProfile, 'name'>): string {
  const overrides = SIGNING_OPERATIONS.filter((op) => !sameRecipe(profile.keys[op], DEFAULT_KEYS[op])).map(
    (op) => `${op}=${recipeName(profile.keys[op])}`,
  );
  return [profile.algorithm, profile.serialization, profile.encoding, ...overrides].join('/');
}

function buildProfile(parts: Omit<SigningProfile, 'name' | 'keys'> & { keys?: Partial<Record<SigningOperation, SecretRole[]>> }): SigningProfile {
  const keys = { ...DEFAULT_KEYS, ...(parts.keys ?? {}) };
  const profile = { algorithm: parts.algorithm, serialization: parts.serialization, encoding: parts.encoding, keys };
  return { name: profileName(profile), ...profile };
}

/** The documented scheme as best understood: HMAC-SHA512 over compact insertion-order JSON, lowercase hex. */
export const DEFAULT_SIGNING_PROFILE: SigningProfile = deepFreeze(
  buildProfile({ algorithm: 'hmac-sha512', serialization: 'compact-insertion', encoding: 'hex' }),
);

function deepFreeze(profile: SigningProfile): SigningProfile {
  Object.values(profile.keys).forEach((roles) => Object.freeze(roles));
  Object.freeze(profile.keys);
  return Object.freeze(profile);
}

function oneOf<T extends string>(allowed: readonly T[], value: unknown, what: string): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) {
    return value as T;
  }
  throw new SigningProfileError(`${what} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
}

function parseRecipe(value: unknown, op: string): SecretRole[] {
  const roles = typeof value === 'string' ? value.split('+') : value;
  if (!Array.isArray(roles) || roles.length === 0 || roles.length > 2) {
    throw new SigningProfileError(`key recipe for ${op} must be one or two of partner, merchant (e.g. "merchant+partner")`);
  }
  return roles.map((role) => oneOf<SecretRole>(['merchant', 'partner'], role, `key role for ${op}`));
}

function parseKeys(value: unknown): Partial<Record<SigningOperation, SecretRole[]>> {
  if (value === undefined) {
    return {};
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SigningProfileError('keys must be an object mapping operations to key recipes');
  }
  const keys: Partial<Record<SigningOperation, SecretRole[]>> = {};
  for (const [op, recipe] of Object.entries(value)) {
    keys[oneOf(SIGNING_OPERATIONS, op, 'operation in keys')] = parseRecipe(recipe, op);
  }
  return keys;
}

function fromName(value: string): SigningProfile {
  const [algorithm, serialization, encoding, ...overrides] = value.split('/');
  const keys: Partial<Record<SigningOperation, SecretRole[]>> = {};
  for (const override of overrides) {
    const [op, recipe, extra] = override.split('=');
    if (extra !== undefined || recipe === undefined) {
      throw new SigningProfileError(`"${override}" is not <operation>=<recipe>`);
    }
    keys[oneOf(SIGNING_OPERATIONS, op, 'operation')] = parseRecipe(recipe, op ?? '');
  }
  return buildProfile({
    algorithm: oneOf(SIGNING_ALGORITHMS, algorithm, 'algorithm'),
    serialization: oneOf(BODY_SERIALIZATIONS, serialization, 'serialization'),
    encoding: oneOf(SIGNATURE_ENCODINGS, encoding, 'encoding'),
    keys,
  });
}

function fromJson(value: string): SigningProfile {
  const record = parseJsonObject(value, {
    notJson: (reason) => new SigningProfileError(`starts with "{" but ${reason}`),
    notObject: () => new SigningProfileError('starts with "{" but is not a JSON object'),
  });
  const unknownFields = Object.keys(record).filter((k) => !['name', 'algorithm', 'serialization', 'encoding', 'keys'].includes(k));
  if (unknownFields.length > 0) {
    throw new SigningProfileError(`has unknown JSON fields: ${unknownFields.join(', ')}`);
  }
  return buildProfile({
    algorithm: oneOf(SIGNING_ALGORITHMS, record.algorithm, 'algorithm'),
    serialization: oneOf(BODY_SERIALIZATIONS, record.serialization, 'serialization'),
    encoding: oneOf(SIGNATURE_ENCODINGS, record.encoding, 'encoding'),
    keys: parseKeys(record.keys),
  });
}

/**
 * Resolves the SIGNING_PROFILE setting. Empty or `default`: the default profile. A profile name
 * (as `profileName` and `calibrate` produce, e.g. `sha512-secret-body/compact-sorted/hex/payout=merchant`),
 * or a JSON object `{ algorithm, serialization, encoding, keys? }` where `keys` maps operations to
 * recipes such as "merchant+partner"; operations left out keep the documented recipe. A JSON `name`
 * is ignored in favour of the canonical name, so logs always show what is really used.
 * @throws SigningProfileError naming the bad part.
 */
export function resolveSigningProfile(value?: string): SigningProfile {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '' || trimmed === 'default') {
    return DEFAULT_SIGNING_PROFILE;
  }
  return trimmed.startsWith('{') ? fromJson(trimmed) : fromName(trimmed);
}

/** Builds a profile from its parts; operations left out of `keys` keep the documented recipe. */
export function makeSigningProfile(
  parts: Omit<SigningProfile, 'name' | 'keys'> & { keys?: Partial<Record<SigningOperation, SecretRole[]>> },
): SigningProfile {
  return buildProfile(parts);
}
