/**
 * Cuts one member out of the top-level object of JSON text, as text: everything else (escapes such
 * as `\u00e9` or `\/`, number spellings such as `100.50`, key order, spacing) stays byte for byte.
 * A provider that signs the text it sends is verified over exactly that text minus its signature.
 *
 * The scanner walks the top-level object only; nested values are skipped with a string-aware
 * bracket count, without recursion, so no input can overflow the stack. Keys are compared after
 * JSON decoding, so `"sign\u0061ture"` is the same key as `"signature"` (as JSON.parse sees it).
 */

/** What {@link cutTopLevelMember} found. */
export type MemberCut =
  /** The member occurs once: the text without it, and its value's raw text. */
  | { kind: 'cut'; text: string; valueText: string }
  /** The top-level object has no such member (one only inside nested values does not count). */
  | { kind: 'absent' }
  /** The member occurs more than once at the top level: which one a parser keeps is not portable. */
  | { kind: 'repeated'; count: number }
  /** The text is not one JSON object (an array, a scalar, or not JSON at all). */
  | { kind: 'not-object' };

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && isSpace(text.charCodeAt(i))) i += 1;
  return i;
}

/** Index just past the string that starts at `from` (a `"`), or -1 when it is not closed. */
function stringEnd(text: string, from: number): number {
  for (let i = from + 1; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i += 1;
    else if (c === 0x22) return i + 1;
  }
  return -1;
}

/** Index just past the value that starts at `from`, or -1 when the text ends inside it. */
function valueEnd(text: string, from: number): number {
  const first = text.charCodeAt(from);
  if (first === 0x22) return stringEnd(text, from);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let i = from; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i = stringEnd(text, i);
        if (i < 0) return -1;
        i -= 1;
      } else if (c === 0x7b || c === 0x5b) depth += 1;
      else if (c === 0x7d || c === 0x5d) {
        depth -= 1;
        if (depth === 0) return i + 1;
      }
    }
    return -1;
  }
  // A number or a literal: runs until a delimiter.
  let i = from;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x7d || c === 0x5d || isSpace(c)) break;
    i += 1;
  }
  return i === from ? -1 : i;
}

interface Member {
  key: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
}

/** The members of the top-level object, in order, or undefined when the text is not one object. */
function topLevelMembers(text: string): Member[] | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== 0x7b) return undefined;
  i = skipSpace(text, i + 1);
  const members: Member[] = [];
  if (text.charCodeAt(i) === 0x7d) return skipSpace(text, i + 1) === text.length ? members : undefined;
  for (;;) {
    if (text.charCodeAt(i) !== 0x22) return undefined;
    const keyStart = i;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    let key: unknown;
    try {
      key = JSON.parse(text.slice(keyStart, keyEnd));
    } catch {
      return undefined;
    }
    i = skipSpace(text, keyEnd);
    if (text.charCodeAt(i) !== 0x3a) return undefined;
    const valueStart = skipSpace(text, i + 1);
    const end = valueEnd(text, valueStart);
    if (end < 0) return undefined;
    members.push({ key: key as string, keyStart, valueStart, valueEnd: end });
    i = skipSpace(text, end);
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i = skipSpace(text, i + 1);
      continue;
    }
    if (c !== 0x7d) return undefined;
    return skipSpace(text, i + 1) === text.length ? members : undefined;
  }
}

/**
 * The text of a JSON object without its top-level member `name`. The member goes with the comma
 * that joined it to its neighbour: the one before it, or the one after it when it is first, so
 * `{"a":1,"signature":"x"}` and `{"signature":"x","a":1}` both become `{"a":1}`, and
 * `{"a": 1, "signature": "x", "b": 2}` becomes `{"a": 1, "b": 2}`.
 */
export function cutTopLevelMember(text: string, name: string): MemberCut {
  const members = topLevelMembers(text);
  if (members === undefined) return { kind: 'not-object' };
  const matching = members.filter((member) => member.key === name);
  if (matching.length === 0) return { kind: 'absent' };
  if (matching.length > 1) return { kind: 'repeated', count: matching.length };
  const index = members.indexOf(matching[0] as Member);
  const member = members[index] as Member;
  const previous = members[index - 1];
  const next = members[index + 1];
  const [from, to] =
    previous !== undefined
      ? [previous.valueEnd, member.valueEnd]
      : next !== undefined
        ? [member.keyStart, next.keyStart]
        : [member.keyStart, member.valueEnd];
  return {
    kind: 'cut',
    text: text.slice(0, from) + text.slice(to),
    valueText: text.slice(member.valueStart, member.valueEnd),
  };
}
