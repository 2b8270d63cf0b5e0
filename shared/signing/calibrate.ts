import {
  BODY_SERIALIZATIONS,
  KEY_RECIPES,
  SIGNATURE_ENCODINGS,
  SIGNING_ALGORITHMS,
  SIGNING_OPERATIONS,
  makeSigningProfile,
  type SigningOperation,
  type SigningProfile,
  type SigningSecrets,
} from './profile';
import { digest, serializeForSigning, signingKey } from './sign';

/**
 * Guesses the operation of a sample body from its fields, so a calibrated key recipe is applied to
 * the right operation: a payout has amount and withdrawal_reference, an account verification has
 * account_number without amount, an order notification has status and data.
 */
export function inferSigningOperation(body: object): SigningOperation | undefined {
  const has = (field: string): boolean => Object.hasOwn(body, field);
  if (has('amount') && has('withdrawal_reference')) return 'payout';
  if (has('account_number') && has('account_code') && !has('amount')) return 'accountVerification';
  if (has('status') && has('data')) return 'orderNotification';
  return undefined;
}

/**
 * Every profile that reproduces `knownSignature` for `body` (algorithms x serializations x
 * encodings x key recipes). The recipe found is set for `operation` (inferred from the body when not
 * given; all operations when it cannot be inferred); other operations keep the seed's recipe.
 * Several results mean the sample cannot tell them apart (for example a body whose keys are
 * already sorted); an empty result means no supported scheme matches. Recipes needing an empty
 * secret are skipped.
 */
export function calibrate(
  body: object,
  knownSignature: string,
  secrets: SigningSecrets,
  operation: SigningOperation | undefined = inferSigningOperation(body),
): SigningProfile[] {
  const matches: SigningProfile[] = [];
  const seen = new Set<string>();
  const wanted = knownSignature.trim();
  for (const roles of KEY_RECIPES) {
    if (roles.some((role) => (role === 'merchant' ? secrets.merchantSecret : secrets.partnerSecret) === '')) {
      continue;
    }
    const key = signingKey(roles, secrets);
    for (const serialization of BODY_SERIALIZATIONS) {
      const serialized = serializeForSigning(body, serialization);
      for (const algorithm of SIGNING_ALGORITHMS) {
        for (const encoding of SIGNATURE_ENCODINGS) {
          const produced = digest({ algorithm, serialization, encoding }, key, serialized);
          const same = encoding === 'hex' ? produced === wanted.toLowerCase() : produced === wanted;
          if (!same) continue;
          const ops = operation ? [operation] : SIGNING_OPERATIONS;
          const keys = Object.fromEntries(ops.map((op) => [op, [...roles]]));
          const profile = makeSigningProfile({ algorithm, serialization, encoding, keys });
          if (!seen.has(profile.name)) {
            seen.add(profile.name);
            matches.push(profile);
          }
        }
      }
    }
  }
  return matches;
}
