import { KycResponsesFormatError } from './errors';

/**
 * Reading the KYC service's `GET /api/v1/responses` answer: the callbacks the service has sent for
 * an app. The provider's documentation shows the payloads but not the answer around them, so payrelay accepts the
 * shapes such an endpoint plausibly has and refuses everything else as a whole.
 */

/** Fields that may wrap the list: `{ "data": [...] }`, `{ "responses": [...] }`, `{ "docs": [...] }`. */
export const RESPONSES_WRAPPERS = ['data', 'responses', 'docs'] as const;

/** How many wrapper objects may sit around the list (`{ "data": { "docs": [...] } }` is two). */
const MAX_WRAPPING = 2;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (isObject(value)) {
    const keys = Object.keys(value);
    return keys.length === 0 ? 'an empty object' : `an object with fields ${keys.slice(0, 8).join(', ')}${keys.length > 8 ? ', ...' : ''}`;
  }
  return `a ${typeof value}`;
}

function listOf(answer: unknown, depth: number, path: string): unknown[] {
  if (Array.isArray(answer)) return answer;
  if (isObject(answer) && depth < MAX_WRAPPING) {
    const present = RESPONSES_WRAPPERS.filter((key) => key in answer && answer[key] !== null && answer[key] !== undefined);
    if (present.length > 1) {
      throw new KycResponsesFormatError(`${path} has more than one list field (${present.join(', ')}); cannot tell which holds the callbacks`);
    }
    const [key] = present;
    if (key !== undefined) return listOf(answer[key], depth + 1, `${path}.${key}`);
  }
  throw new KycResponsesFormatError(
    `${path} is ${describe(answer)}: expected an array of callback payloads, or an object holding one in ${RESPONSES_WRAPPERS.join(', ')}`,
  );
}

/**
 * The callback payloads of a `/responses` answer, in the service's order. Accepted: an array of
 * payloads, or an object holding one in `data`, `responses` or `docs` (at most two objects deep).
 * Every element must be a JSON object; whether payrelay recognizes it is decided later, one by one,
 * exactly as for a delivered callback.
 * @throws KycResponsesFormatError when the answer has any other shape or an element is not an
 *   object: the whole answer is refused, so a catch-up never acts on part of one
 */
export function readKycResponses(answer: unknown): Json[] {
  const list = listOf(answer, 0, 'the answer');
  list.forEach((item, index) => {
    if (!isObject(item)) throw new KycResponsesFormatError(`element ${index} of the list is ${describe(item)}, not a callback payload (a JSON object)`);
  });
  return list as Json[];
}
