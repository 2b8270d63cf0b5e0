import {
  BODY_SERIALIZATIONS,
  DEFAULT_SIGNING_PROFILE,
  KEY_RECIPES,
  SIGNATURE_ENCODINGS,
  SIGNING_ALGORITHMS,
  SIGNING_OPERATIONS,
  makeSigningProfile,
  type BodySerialization,
  type SigningOperation,
  type SigningProfile,
  type SigningSecrets,
} from './profile';
import { cutTopLevelMember } from './json-member';
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

/** One signed text to try, and the serialization a matching profile records. */
interface Candidate {
  text: string;
  serialization: BodySerialization;
}

/**
 * Every profile (algorithm x encoding x key recipe) that turns one of the candidate texts into
 * `knownSignature`, its recipe set for `operation` (all operations when undefined), without repeats.
 */
function profilesReproducing(
  candidates: readonly Candidate[],
  knownSignature: string,
  secrets: SigningSecrets,
  operation: SigningOperation | undefined,
): SigningProfile[] {
  const matches: SigningProfile[] = [];
  const seen = new Set<string>();
  const wanted = knownSignature.trim();
  for (const roles of KEY_RECIPES) {
    if (roles.some((role) => (role === 'merchant' ? secrets.merchantSecret : secrets.partnerSecret) === '')) {
      continue;
    }
    const key = signingKey(roles, secrets);
    for (const { text, serialization } of candidates) {
      for (const algorithm of SIGNING_ALGORITHMS) {
        for (const encoding of SIGNATURE_ENCODINGS) {
          const produced = digest({ algorithm, serialization, encoding }, key, text);
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

/**
 * Every profile that reproduces `knownSignature` for `body` (algorithms x serializations x
 * encodings x key recipes). The recipe found is set for `operation` (inferred from the body when not
 * given; all operations when it cannot be inferred); other operations keep the documented recipe.
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
  const candidates = BODY_SERIALIZATIONS.map((serialization) => ({ text: serializeForSigning(body, serialization), serialization }));
  return profilesReproducing(candidates, knownSignature, secrets, operation);
}

/**
 * Calibration from a body exactly as it was received, carrying its own top-level `signature`: tries
 * the received text with the signature cut out as text (what a sender that signs its own bytes
 * signed) and each re-serialization of the parsed body. A match over the received text is reported
 * with the default serialization: the receiver checks the received text first whatever the profile
 * says. Empty when the text carries no single string signature or nothing reproduces it.
 */
export function calibrateReceived(
  text: string,
  secrets: SigningSecrets,
  operation?: SigningOperation,
): SigningProfile[] {
  const cut = cutTopLevelMember(text, 'signature');
  if (cut.kind !== 'cut') return [];
  const signature: unknown = JSON.parse(cut.valueText);
  if (typeof signature !== 'string' || signature === '') return [];
  const body = JSON.parse(text) as object;
  const candidates: Candidate[] = [
    { text: cut.text, serialization: DEFAULT_SIGNING_PROFILE.serialization },
    ...BODY_SERIALIZATIONS.map((serialization) => ({ text: serializeForSigning(body, serialization), serialization })),
  ];
  return profilesReproducing(candidates, signature, secrets, operation ?? inferSigningOperation(body));
}
