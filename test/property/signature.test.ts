import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  makeSigningProfile,
  serializeForSigning,
  verifyPayload,
  withSignature,
  type SigningOperation,
  type SigningProfile,
  type SigningSecrets,
} from '@shared/signing';
import { BODY_SERIALIZATIONS, SIGNATURE_ENCODINGS, SIGNING_ALGORITHMS, SIGNING_OPERATIONS } from '@shared/signing/profile';
import { fuzzSeed, runs, scaledTimeout } from './runs';

/*
 * Money-safety rule 6 at its root: a signed body verifies, and any single change to the signed
 * content or to the signature is refused. What counts as "the signed content" is the body without
 * `signature`, serialized by the profile, so changes that serialization erases (whitespace, key
 * order under compact-sorted) are not changes; hex signatures compare case-insensitively by design.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const profileArb: fc.Arbitrary<SigningProfile> = fc
  .record({
    algorithm: fc.constantFrom(...SIGNING_ALGORITHMS),
    serialization: fc.constantFrom(...BODY_SERIALIZATIONS),
    encoding: fc.constantFrom(...SIGNATURE_ENCODINGS),
  })
  .map((parts) => makeSigningProfile(parts));

const secretsArb: fc.Arbitrary<SigningSecrets> = fc.record({
  partnerSecret: fc.string({ minLength: 1, maxLength: 40 }),
  merchantSecret: fc.string({ minLength: 1, maxLength: 40 }),
});

const operationArb = fc.constantFrom(...SIGNING_OPERATIONS);

/** A body as it arrives on the wire: parsed JSON, so only values JSON can carry. */
const bodyArb: fc.Arbitrary<Record<string, Json>> = fc
  .dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'amount', 'status', 'data')), fc.jsonValue({ maxDepth: 3 }), {
    maxKeys: 6,
  })
  .map((value) => JSON.parse(JSON.stringify(value)) as Record<string, Json>);

interface Signed {
  profile: SigningProfile;
  secrets: SigningSecrets;
  operation: SigningOperation;
  body: Record<string, Json> & { signature: string };
}

const signedArb: fc.Arbitrary<Signed> = fc
  .record({ profile: profileArb, secrets: secretsArb, operation: operationArb, body: bodyArb })
  .map(({ profile, secrets, operation, body }) => ({
    profile,
    secrets,
    operation,
    // Round-trip through JSON text, like a real delivery.
    body: JSON.parse(JSON.stringify(withSignature(body, operation, secrets, profile))) as Record<string, Json> & { signature: string },
  }));

/** Every place in a JSON value a change can be made: a path of keys or indices. */
function paths(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push([...prefix, i], ...paths(item, [...prefix, i]));
    });
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      if (prefix.length === 0 && key === 'signature') continue;
      out.push([...prefix, key], ...paths(value[key] as Json, [...prefix, key]));
    }
  }
  return out;
}

type Change = { kind: 'set'; value: Json } | { kind: 'delete' } | { kind: 'add'; key: string; value: Json };

/** Applies one change at one path (or at the root for `add` with no path) of a deep copy. */
function change(body: Record<string, Json>, path: Array<string | number> | undefined, edit: Change): Record<string, Json> {
  const copy = JSON.parse(JSON.stringify(body)) as Record<string, Json>;
  if (path === undefined || path.length === 0 || edit.kind === 'add') {
    let target: Json = copy;
    for (const step of path ?? []) target = (target as Record<string | number, Json>)[step] as Json;
    if (edit.kind === 'add' && target !== null && typeof target === 'object' && !Array.isArray(target)) {
      Object.defineProperty(target, edit.key, { value: edit.value, enumerable: true, writable: true, configurable: true });
    } else if (edit.kind === 'add' && Array.isArray(target)) {
      target.push(edit.value);
    }
    return copy;
  }
  const parent = path.slice(0, -1).reduce<Json>((node, step) => (node as Record<string | number, Json>)[step] as Json, copy);
  const last = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) {
    if (edit.kind === 'delete') parent.splice(last as number, 1);
    else parent[last as number] = edit.value;
  } else if (parent !== null && typeof parent === 'object') {
    if (edit.kind === 'delete') delete parent[last as string];
    else Object.defineProperty(parent, last, { value: edit.value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

const changeArb: fc.Arbitrary<Change> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((value) => ({ kind: 'set', value: JSON.parse(JSON.stringify(value)) as Json }) as Change),
  fc.constant({ kind: 'delete' } as Change),
  fc
    .tuple(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'signature2')), fc.jsonValue({ maxDepth: 1 }))
    .map(([key, value]) => ({ kind: 'add', key, value: JSON.parse(JSON.stringify(value)) as Json }) as Change),
);

const HEX = '0123456789abcdef';
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=';

/** What the profile compares: hex case-insensitively, base64 exactly. */
const sameSignature = (profile: SigningProfile, a: unknown, b: unknown): boolean =>
  typeof a === 'string' && typeof b === 'string' && (profile.encoding === 'hex' ? a.toLowerCase() === b.toLowerCase() : a === b);

describe('signature verification (property)', () => {
  it('a signed body verifies under its own profile, operation and secrets', () => {
    fc.assert(
      fc.property(signedArb, ({ profile, secrets, operation, body }) => {
        expect(verifyPayload(body, operation, secrets, profile)).toBe(true);
      }),
      { numRuns: runs(500), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('any single structural change to the signed content is refused', () => {
    fc.assert(
      fc.property(signedArb, fc.nat(), changeArb, ({ profile, secrets, operation, body }, pick, edit) => {
        const all = paths(body);
        const path = all.length === 0 ? undefined : all[pick % all.length];
        const changed = change(body, path, edit);
        // A change that leaves the signed bytes as they were is no change (e.g. the same value set again).
        fc.pre(serializeForSigning(changed, profile.serialization) !== serializeForSigning(body, profile.serialization));
        expect(verifyPayload(changed, operation, secrets, profile)).toBe(false);
      }),
      { numRuns: runs(1500), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('any single character changed in the delivered JSON text verifies only if the signed content and signature are unchanged', () => {
    fc.assert(
      fc.property(signedArb, fc.nat(), fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }), ({ profile, secrets, operation, body }, at, char) => {
        const text = JSON.stringify(body);
        const i = at % text.length;
        fc.pre(text[i] !== char);
        const tampered = text.slice(0, i) + char + text.slice(i + 1);
        let parsed: unknown;
        try {
          parsed = JSON.parse(tampered);
        } catch {
          return; // not JSON any more: the receiver answers 400 before any signature check
        }
        fc.pre(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed));
        const candidate = parsed as Record<string, unknown>;
        const unchanged =
          serializeForSigning(candidate, profile.serialization) === serializeForSigning(body, profile.serialization) &&
          sameSignature(profile, candidate.signature, body.signature);
        expect(verifyPayload(candidate, operation, secrets, profile)).toBe(unchanged);
      }),
      { numRuns: runs(3000), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('any single change to the signature is refused: a character replaced, dropped or added, or a wrong type', () => {
    const signatureChangeArb = fc.oneof(
      fc.tuple(fc.constant('replace' as const), fc.nat(), fc.nat()),
      fc.tuple(fc.constant('drop' as const), fc.nat(), fc.nat()),
      fc.tuple(fc.constant('insert' as const), fc.nat(), fc.nat()),
    );
    fc.assert(
      fc.property(signedArb, signatureChangeArb, ({ profile, secrets, operation, body }, [kind, at, pick]) => {
        const signature = body.signature;
        const alphabet = profile.encoding === 'hex' ? HEX : BASE64;
        const i = at % signature.length;
        let next: string;
        if (kind === 'replace') {
          const current = signature[i]!.toLowerCase();
          const options = [...alphabet].filter((c) => (profile.encoding === 'hex' ? c !== current : c !== signature[i]));
          next = signature.slice(0, i) + options[pick % options.length] + signature.slice(i + 1);
        } else if (kind === 'drop') {
          next = signature.slice(0, i) + signature.slice(i + 1);
        } else {
          next = signature.slice(0, i) + alphabet[pick % alphabet.length] + signature.slice(i);
        }
        expect(verifyPayload({ ...body, signature: next }, operation, secrets, profile)).toBe(false);
      }),
      { numRuns: runs(1500), seed: fuzzSeed() },
    );
    fc.assert(
      fc.property(signedArb, fc.constantFrom<unknown>(undefined, null, '', 0, 1, true, [], {}), ({ profile, secrets, operation, body }, wrong) => {
        expect(verifyPayload({ ...body, signature: wrong }, operation, secrets, profile)).toBe(false);
        expect(verifyPayload({ ...body, signature: [body.signature] }, operation, secrets, profile)).toBe(false);
        const { signature: _dropped, ...unsigned } = body;
        expect(verifyPayload(unsigned, operation, secrets, profile)).toBe(false);
      }),
      { numRuns: runs(300), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('a signature made with any other secret is refused', () => {
    fc.assert(
      fc.property(signedArb, fc.constantFrom('partnerSecret', 'merchantSecret' as const), fc.string({ minLength: 1, maxLength: 3 }), (signed, which, extra) => {
        const { profile, secrets, operation, body } = signed;
        const roles = profile.keys[operation];
        fc.pre(roles.includes(which === 'partnerSecret' ? 'partner' : 'merchant'));
        const wrong = { ...secrets, [which]: secrets[which] + extra };
        expect(verifyPayload(body, operation, wrong, profile)).toBe(false);
      }),
      { numRuns: runs(500), seed: fuzzSeed() },
    );
  }, scaledTimeout());
});
