import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  calibrateReceived,
  DEFAULT_SIGNING_PROFILE,
  SigningProfileError,
  calibrate,
  makeSigningProfile,
  resolveSigningProfile,
  serializeForSigning,
  signPayload,
  verifyPayload,
  withSignature,
  type SigningProfile,
} from '@shared/signing/index';

const secrets = { partnerSecret: 'partner-secret-Ωx', merchantSecret: 'merchant-secret-42' };

// Insertion order deliberately unsorted, with a nested object and an array.
const payout = {
  amount: '150.00',
  account_number: '0241234567',
  currency: 'GHS',
  withdrawal_reference: 'wd-0001',
  partner_id: 'partner-9',
  platform_merchant_id: 'pm-7',
  account_code: 'MTN',
  meta: { z: 1, a: [{ y: true, b: null }] },
};
const insertionJson =
  '{"amount":"150.00","account_number":"0241234567","currency":"GHS","withdrawal_reference":"wd-0001","partner_id":"partner-9","platform_merchant_id":"pm-7","account_code":"MTN","meta":{"z":1,"a":[{"y":true,"b":null}]}}';
const sortedJson =
  '{"account_code":"MTN","account_number":"0241234567","amount":"150.00","currency":"GHS","meta":{"a":[{"b":null,"y":true}],"z":1},"partner_id":"partner-9","platform_merchant_id":"pm-7","withdrawal_reference":"wd-0001"}';
const payoutKey = secrets.merchantSecret + secrets.partnerSecret;

const hmac = (key: string, data: string, enc: 'hex' | 'base64') => createHmac('sha512', key).update(data).digest(enc);
const sha = (data: string, enc: 'hex' | 'base64') => createHash('sha512').update(data).digest(enc);

const profile = (parts: Omit<SigningProfile, 'name' | 'keys'>): SigningProfile => makeSigningProfile(parts);

describe('serialization', () => {
  it('drops only the top-level signature and keeps insertion order', () => {
    expect(serializeForSigning({ ...payout, signature: 'x' }, 'compact-insertion')).toBe(insertionJson);
    expect(serializeForSigning(payout, 'compact-insertion')).toBe(insertionJson);
  });

  it('sorts keys recursively and keeps array order', () => {
    expect(serializeForSigning({ signature: 'x', ...payout }, 'compact-sorted')).toBe(sortedJson);
  });
});

describe('signPayload against vectors computed here with node:crypto', () => {
  it('default profile: HMAC-SHA512 over insertion JSON, merchant+partner for payout, 128 lowercase hex', () => {
    const signature = signPayload(payout, 'payout', secrets);
    expect(signature).toBe(hmac(payoutKey, insertionJson, 'hex'));
    expect(signature).toMatch(/^[0-9a-f]{128}$/);
  });

  it('account verification uses the partner secret alone', () => {
    const body = { account_number: '0241234567', account_code: 'MTN', currency: 'GHS' };
    expect(signPayload(body, 'accountVerification', secrets)).toBe(hmac(secrets.partnerSecret, JSON.stringify(body), 'hex'));
  });

  it.each([
    ['hmac-sha512', 'compact-insertion', 'hex', () => hmac(payoutKey, insertionJson, 'hex')],
    ['hmac-sha512', 'compact-sorted', 'base64', () => hmac(payoutKey, sortedJson, 'base64')],
    ['sha512-secret-body', 'compact-insertion', 'hex', () => sha(payoutKey + insertionJson, 'hex')],
    ['sha512-secret-body', 'compact-sorted', 'base64', () => sha(payoutKey + sortedJson, 'base64')],
    ['sha512-body-secret', 'compact-insertion', 'base64', () => sha(insertionJson + payoutKey, 'base64')],
    ['sha512-body-secret', 'compact-sorted', 'hex', () => sha(sortedJson + payoutKey, 'hex')],
  ] as const)('%s / %s / %s', (algorithm, serialization, encoding, expected) => {
    expect(signPayload(payout, 'payout', secrets, profile({ algorithm, serialization, encoding }))).toBe(expected());
  });

  it('changing any part of the profile changes the signature', () => {
    const signatures = new Set(
      ['hmac-sha512', 'sha512-secret-body', 'sha512-body-secret'].flatMap((algorithm) =>
        ['compact-insertion', 'compact-sorted'].map((serialization) =>
          signPayload(payout, 'payout', secrets, resolveSigningProfile(`${algorithm}/${serialization}/hex`)),
        ),
      ),
    );
    expect(signatures.size).toBe(6);
    const partnerOnly = resolveSigningProfile('hmac-sha512/compact-insertion/hex/payout=partner');
    expect(signPayload(payout, 'payout', secrets, partnerOnly)).toBe(hmac(secrets.partnerSecret, insertionJson, 'hex'));
  });

  it('refuses to sign when a secret the recipe needs is empty', () => {
    expect(() => signPayload(payout, 'payout', { ...secrets, merchantSecret: '' })).toThrow(SigningProfileError);
  });
});

describe('withSignature and verifyPayload', () => {
  const signed = withSignature(payout, 'payout', secrets);

  it('adds the signature last and verifies', () => {
    expect(Object.keys(signed).at(-1)).toBe('signature');
    expect(verifyPayload(signed, 'payout', secrets)).toBe(true);
    // Re-signing an already signed body gives the same signature: the old one is not signed over.
    expect(withSignature(signed, 'payout', secrets).signature).toBe(signed.signature);
  });

  it('verifies a body that went over the wire (parsed JSON keeps string-key order)', () => {
    expect(verifyPayload(JSON.parse(JSON.stringify(signed)), 'payout', secrets)).toBe(true);
  });

  it('accepts upper-case hex', () => {
    expect(verifyPayload({ ...signed, signature: signed.signature.toUpperCase() }, 'payout', secrets)).toBe(true);
  });

  it('rejects a body altered by one character', () => {
    expect(verifyPayload({ ...signed, amount: '150.01' }, 'payout', secrets)).toBe(false);
    expect(verifyPayload({ ...signed, withdrawal_reference: 'wd-0002' }, 'payout', secrets)).toBe(false);
  });

  it('rejects a signature made with a wrong key', () => {
    const wrong = withSignature(payout, 'payout', { ...secrets, partnerSecret: 'partner-secret-Ωy' });
    expect(verifyPayload(wrong, 'payout', secrets)).toBe(false);
    // The right secrets in the wrong order are a wrong key too.
    const swapped = withSignature(payout, 'payout', { partnerSecret: secrets.merchantSecret, merchantSecret: secrets.partnerSecret });
    expect(verifyPayload(swapped, 'payout', secrets)).toBe(false);
  });

  it('rejects under a different profile or operation', () => {
    expect(verifyPayload(signed, 'payout', secrets, resolveSigningProfile('hmac-sha512/compact-sorted/hex'))).toBe(false);
    expect(verifyPayload(signed, 'accountVerification', secrets)).toBe(false);
  });

  it.each([undefined, '', 'short', 42, null, 'a'.repeat(128), 'a'.repeat(1000)])(
    'returns false without throwing for signature %j',
    (signature) => {
      expect(verifyPayload({ ...payout, signature }, 'payout', secrets)).toBe(false);
    },
  );

  it('returns false when a needed secret is missing', () => {
    expect(verifyPayload(signed, 'payout', { ...secrets, merchantSecret: '' })).toBe(false);
  });
});

describe('JSON.parse and integer-like keys', () => {
  it('moves integer-like keys first, so insertion order is not the wire order for such bodies', () => {
    const wire = '{"b":"x","10":"y"}';
    expect(JSON.stringify(JSON.parse(wire))).toBe('{"10":"y","b":"x"}');
    const signedOverWire = hmac(secrets.partnerSecret, '{"b":"x","10":"y"}', 'hex');
    const body = { ...JSON.parse(wire), signature: signedOverWire };
    expect(verifyPayload(body, 'accountVerification', secrets)).toBe(false);
  });
});

describe('resolveSigningProfile', () => {
  it('defaults', () => {
    expect(resolveSigningProfile()).toBe(DEFAULT_SIGNING_PROFILE);
    expect(resolveSigningProfile('')).toBe(DEFAULT_SIGNING_PROFILE);
    expect(resolveSigningProfile('default')).toBe(DEFAULT_SIGNING_PROFILE);
    expect(DEFAULT_SIGNING_PROFILE).toEqual({
      name: 'hmac-sha512/compact-insertion/hex',
      algorithm: 'hmac-sha512',
      serialization: 'compact-insertion',
      encoding: 'hex',
      keys: {
        accountVerification: ['partner'],
        payout: ['merchant', 'partner'],
        orderNotification: ['merchant', 'partner'],
        collectionOrder: ['merchant', 'partner'],
      },
    });
    expect(Object.isFrozen(DEFAULT_SIGNING_PROFILE.keys.payout)).toBe(true);
  });

  it('resolves names, and names round-trip', () => {
    const p = resolveSigningProfile('sha512-body-secret/compact-sorted/base64/payout=merchant/orderNotification=partner+merchant');
    expect(p.keys.payout).toEqual(['merchant']);
    expect(p.keys.orderNotification).toEqual(['partner', 'merchant']);
    expect(p.keys.accountVerification).toEqual(['partner']);
    expect(resolveSigningProfile(p.name)).toEqual(p);
  });

  it('resolves JSON, keeping the documented recipe for operations left out, and renames canonically', () => {
    const p = resolveSigningProfile(
      JSON.stringify({ name: 'mine', algorithm: 'sha512-secret-body', serialization: 'compact-insertion', encoding: 'hex', keys: { payout: 'partner' } }),
    );
    expect(p.name).toBe('sha512-secret-body/compact-insertion/hex/payout=partner');
    expect(p.keys.collectionOrder).toEqual(['merchant', 'partner']);
    const arrays = resolveSigningProfile('{"algorithm":"hmac-sha512","serialization":"compact-sorted","encoding":"hex","keys":{"payout":["merchant"]}}');
    expect(arrays.keys.payout).toEqual(['merchant']);
  });

  it.each([
    ['hmac-sha256/compact-insertion/hex', /algorithm must be one of/],
    ['hmac-sha512/pretty/hex', /serialization must be one of/],
    ['hmac-sha512/compact-insertion/HEX', /encoding must be one of/],
    ['hmac-sha512', /serialization must be one of/],
    ['hmac-sha512/compact-insertion/hex/payout', /not <operation>=<recipe>/],
    ['hmac-sha512/compact-insertion/hex/refund=partner', /operation must be one of/],
    ['hmac-sha512/compact-insertion/hex/payout=partner+merchant+partner', /one or two of partner, merchant/],
    ['hmac-sha512/compact-insertion/hex/payout=admin', /key role for payout/],
    ['{not json', /not valid JSON/],
    ['{"algorithm":"hmac-sha512","serialization":"compact-insertion","encoding":"hex","extra":1}', /has unknown JSON fields: extra/],
    ['{"algorithm":"hmac-sha512","serialization":"compact-insertion","encoding":"hex","keys":[]}', /keys must be an object/],
  ])('rejects %j clearly', (value, message) => {
    expect(() => resolveSigningProfile(value)).toThrow(SigningProfileError);
    expect(() => resolveSigningProfile(value)).toThrow(message);
  });
});

describe('calibrate', () => {
  it('finds exactly the default profile from one default-signed payout sample', () => {
    const sample = withSignature(payout, 'payout', secrets);
    const found = calibrate(sample, sample.signature, secrets);
    expect(found.map((p) => p.name)).toEqual(['hmac-sha512/compact-insertion/hex']);
  });

  it('finds a non-default scheme and names it so it can be configured', () => {
    const account = { account_number: '0241234567', account_code: '057', currency: 'NGN' };
    const known = sha(JSON.stringify({ account_code: '057', account_number: '0241234567', currency: 'NGN' }) + secrets.merchantSecret, 'base64');
    const found = calibrate(account, known, secrets);
    expect(found).toHaveLength(1);
    const [p] = found;
    expect(p?.name).toBe('sha512-body-secret/compact-sorted/base64/accountVerification=merchant');
    expect(resolveSigningProfile(p?.name)).toEqual(p);
    expect(verifyPayload({ ...account, signature: known }, 'accountVerification', secrets, p)).toBe(true);
  });

  it('returns every profile the sample cannot tell apart (a body whose keys are already sorted)', () => {
    const body = { a: '1', b: '2', data: {}, status: 'PAID' };
    const known = hmac(payoutKey, JSON.stringify(body), 'hex');
    const names = calibrate(body, known, secrets).map((p) => p.name);
    expect(names).toEqual(['hmac-sha512/compact-insertion/hex', 'hmac-sha512/compact-sorted/hex']);
  });

  it('applies the recipe to the operation given, or to all when the body says nothing', () => {
    const body = { x: 'y' };
    const known = hmac(secrets.partnerSecret, JSON.stringify(body), 'hex');
    expect(calibrate(body, known, secrets, 'collectionOrder').map((p) => p.name)).toEqual([
      'hmac-sha512/compact-insertion/hex/collectionOrder=partner',
      'hmac-sha512/compact-sorted/hex/collectionOrder=partner',
    ]);
    const [all] = calibrate(body, known, secrets);
    expect(Object.values(all?.keys ?? {})).toEqual([['partner'], ['partner'], ['partner'], ['partner']]);
  });

  it('finds nothing for a signature no supported scheme produces', () => {
    expect(calibrate(payout, 'f'.repeat(128), secrets)).toEqual([]);
    expect(calibrate(payout, hmac('other', insertionJson, 'hex'), secrets)).toEqual([]);
  });
});

describe('calibrateReceived: calibration from a body exactly as received', () => {
  const unsigned = '{"status":"success","message":"re\\u00e7u \\/ ok","data":{"amount":100.50,"partner_order_id":"R-1"}}';

  it('finds a scheme that signs the received text itself, which no re-serialization reproduces', () => {
    const signature = createHmac('sha512', secrets.partnerSecret).update(unsigned, 'utf8').digest('hex');
    const received = `${unsigned.slice(0, -1)}, "signature": "${signature}"}`;
    const names = calibrateReceived(received, secrets, 'orderNotification').map((p) => p.name);
    expect(names).toEqual(['hmac-sha512/compact-insertion/hex/orderNotification=partner']);
    expect(calibrate(JSON.parse(received) as object, signature, secrets, 'orderNotification')).toEqual([]);
  });

  it('finds nothing in a body without exactly one string signature', () => {
    expect(calibrateReceived(unsigned, secrets)).toEqual([]);
    expect(calibrateReceived('{"signature":"a","signature":"b"}', secrets)).toEqual([]);
    expect(calibrateReceived('{"signature":5}', secrets)).toEqual([]);
    expect(calibrateReceived('[1]', secrets)).toEqual([]);
  });
});
