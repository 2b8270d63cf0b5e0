import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '@shared/domain/callbacks';
import { cutTopLevelMember } from '@shared/signing';
import { fuzzSeed, runs, scaledTimeout } from './runs';

/*
 * The received-text signature check stands on cutting `signature` out of the body as text. These
 * properties build bodies the way real senders write them (PHP's `\/` and `\uXXXX` escapes, number
 * spellings JSON.stringify never produces, any spacing, any member order) and check that the cut
 * leaves exactly the text that was signed, and that hostile shapes are told apart.
 */

/** A member value as text: JSON from any value, or a number spelled the way a sender may spell it. */
const valueTextArb: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.constantFrom('100.50', '1E3', '-0.0', '10.000', '0.1e-2'),
  fc.string({ maxLength: 12 }).map((text) => JSON.stringify({ note: `{"signature":${JSON.stringify(text)}}` })),
);

/** How a sender escapes strings: as JSON.stringify does, or as PHP's json_encode does by default. */
type Escaping = 'plain' | 'php';

function escaped(text: string, escaping: Escaping): string {
  if (escaping === 'plain') return text;
  // Outside strings JSON text has neither `/` nor non-ASCII, so a global replace only touches strings.
  return text.replace(/\//g, '\\/').replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const keyArb = fc
  .oneof(fc.string({ maxLength: 8 }), fc.constantFrom('amount', 'status', 'data', 'é/ü', '__proto__', 'signaturé'))
  .filter((key) => key !== 'signature');

const spaceArb = fc.constantFrom('', ' ', '\n  ', '\t', ' \r\n ');

interface Body {
  members: Array<[string, string]>;
  escaping: Escaping;
  /** Spacing: [after `{`, around `:`, after `,`, before `}`]. */
  space: [string, string, string, string];
}

const bodyArb: fc.Arbitrary<Body> = fc.record({
  members: fc.uniqueArray(fc.tuple(keyArb, valueTextArb), { maxLength: 6, selector: ([key]) => key }),
  escaping: fc.constantFrom<Escaping>('plain', 'php'),
  space: fc.tuple(spaceArb, spaceArb, spaceArb, spaceArb),
});

/** The body as text, as a sender writes it. */
function render(body: Body): string {
  const [open, colon, comma, close] = body.space;
  const members = body.members.map(([key, value]) => `${JSON.stringify(key)}${colon}:${colon}${value}`);
  return escaped(`{${open}${members.join(`,${comma}`)}${close}}`, body.escaping);
}

const signatureArb = fc.oneof(fc.stringMatching(/^[0-9a-f]{128}$/), fc.string({ maxLength: 20 }));

describe('cutting the top-level signature out of JSON text (property)', () => {
  it('a signature appended by the sender is cut back to exactly the text it signed', () => {
    fc.assert(
      fc.property(bodyArb, signatureArb, (body, signature) => {
        const signed = render(body);
        const [, colon, comma, close] = body.space;
        const member = escaped(`"signature"${colon}:${colon}${JSON.stringify(signature)}`, body.escaping);
        const withoutClose = signed.slice(0, signed.length - 1 - close.length);
        const sent =
          body.members.length === 0 ? `{${body.space[0]}${member}${close}}` : `${withoutClose},${comma}${member}${close}}`;
        const cut = cutTopLevelMember(sent, 'signature');
        expect(cut.kind).toBe('cut');
        if (cut.kind !== 'cut') return;
        if (body.members.length > 0) expect(cut.text).toBe(signed);
        else expect(JSON.parse(cut.text)).toEqual({});
        expect(JSON.parse(cut.valueText)).toBe(signature);
      }),
      { numRuns: runs(400), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('a signature anywhere leaves the other members exactly as sent, parsing to the body without it', () => {
    fc.assert(
      fc.property(bodyArb, signatureArb, fc.nat(), (body, signature, at) => {
        const position = at % (body.members.length + 1);
        const members = [...body.members];
        members.splice(position, 0, ['signature', JSON.stringify(signature)]);
        const sent = render({ ...body, members });
        const cut = cutTopLevelMember(sent, 'signature');
        expect(cut.kind).toBe('cut');
        if (cut.kind !== 'cut') return;
        const rest = JSON.parse(render(body)) as unknown;
        expect(canonicalJson(JSON.parse(cut.text))).toBe(canonicalJson(rest));
        // Every other member's text survives untouched (escapes, number spellings).
        for (const [key, value] of body.members) {
          expect(cut.text).toContain(escaped(`${JSON.stringify(key)}${body.space[1]}:${body.space[1]}${value}`, body.escaping));
        }
      }),
      { numRuns: runs(400), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('a repeated top-level signature is reported, however its key is spelled', () => {
    fc.assert(
      fc.property(bodyArb, signatureArb, signatureArb, fc.boolean(), (body, first, second, escapeKey) => {
        const key = escapeKey ? 'sign\\u0061ture' : 'signature';
        const sent = `{"signature":${JSON.stringify(first)},${render(body).slice(1, -1)}${body.members.length > 0 ? ',' : ''}"${key}":${JSON.stringify(second)}}`;
        expect(cutTopLevelMember(sent, 'signature')).toEqual({ kind: 'repeated', count: 2 });
      }),
      { numRuns: runs(200), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('a signature only inside nested values is absent at the top level', () => {
    fc.assert(
      fc.property(bodyArb, signatureArb, (body, signature) => {
        const nested = JSON.stringify({ data: { signature }, list: [{ signature }], text: '"signature":"x"' });
        const sent = render({ ...body, members: [...body.members.filter(([k]) => !['data', 'list', 'text'].includes(k)), ['n', nested]] });
        expect(cutTopLevelMember(sent, 'signature')).toEqual({ kind: 'absent' });
      }),
      { numRuns: runs(200), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('agrees with JSON.parse on any JSON text: an object with the member is cut, anything else is not an object', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.boolean(), fc.constantFrom(undefined, 2), (value, addSignature, indent) => {
        const candidate =
          addSignature && value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...value, signature: 'sig' } : value;
        const text = JSON.stringify(candidate, null, indent);
        const cut = cutTopLevelMember(text, 'signature');
        const parsed = JSON.parse(text) as unknown;
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          expect(cut.kind).toBe('not-object');
        } else if (Object.hasOwn(parsed, 'signature')) {
          expect(cut.kind).toBe('cut');
          const { signature: _signature, ...rest } = parsed as Record<string, unknown>;
          if (cut.kind === 'cut') expect(canonicalJson(JSON.parse(cut.text))).toBe(canonicalJson(rest));
        } else {
          expect(cut.kind).toBe('absent');
        }
      }),
      { numRuns: runs(400), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('never throws and never cuts from text that is not a complete JSON object', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), bodyArb, fc.nat(), (noise, body, at) => {
        const text = render(body);
        const truncated = text.slice(0, at % Math.max(1, text.length));
        expect(() => cutTopLevelMember(noise, 'signature')).not.toThrow();
        expect(cutTopLevelMember(truncated, 'signature').kind).toBe('not-object');
      }),
      { numRuns: runs(400), seed: fuzzSeed() },
    );
  }, scaledTimeout());
});
