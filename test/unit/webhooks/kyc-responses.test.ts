import { describe, expect, it } from 'vitest';
import { KycResponsesFormatError } from '@shared/domain/errors';
import { readKycResponses } from '@shared/domain/kyc-responses';

const a = { user_reference: 'u1', status: 'init', event: 'applicantCreated' };
const b = { user_reference: 'u1', status: 'pending', event: 'applicantPending' };

describe('readKycResponses: the undocumented /responses answer', () => {
  it.each([
    ['a bare array', [a, b]],
    ['{ data: [...] }', { message: 'ok', data: [a, b] }],
    ['{ responses: [...] }', { responses: [a, b] }],
    ['{ docs: [...] } (a paginated list)', { docs: [a, b], totalDocs: 2 }],
    ['{ data: { docs: [...] } }', { message: 'ok', data: { docs: [a, b], page: 1 } }],
  ])('accepts %s, in the service order', (_shape, answer) => {
    expect(readKycResponses(answer)).toEqual([a, b]);
  });

  it('accepts an empty list', () => {
    expect(readKycResponses([])).toEqual([]);
    expect(readKycResponses({ data: [] })).toEqual([]);
  });

  it.each([
    ['a string', 'OK', /the answer is a string: expected an array of callback payloads, or an object holding one in data, responses, docs/],
    ['null', null, /the answer is null/],
    ['an object without a list', { message: 'ok', status: 200 }, /the answer is an object with fields message, status/],
    ['a wrapper holding an object', { data: { user_reference: 'u1' } }, /the answer\.data is an object with fields user_reference/],
    ['two list fields', { data: [a], responses: [b] }, /more than one list field \(data, responses\)/],
    ['three levels of wrapping', { data: { data: { data: [a] } } }, /the answer\.data\.data is an object with fields data/],
    ['a number in the list', [a, 7], /element 1 of the list is a number, not a callback payload/],
    ['an array in the list', { data: [a, [b]] }, /element 1 of the list is an array/],
    ['null in the list', [null], /element 0 of the list is null/],
  ])('refuses %s as a whole, naming what it got', (_shape, answer, message) => {
    const error = (() => {
      try {
        readKycResponses(answer);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(KycResponsesFormatError);
    expect((error as Error).message).toMatch(message);
  });
});
