import {
  _addIssue,
  _standardSchema,
  getDotPath,
  looseObject as anyLooseObject,
  object as anyObject,
  record as anyRecord,
  setGlobalMessage,
  strictObject as anyStrictObject,
  type BaseIssue,
  type GenericSchema,
  type ObjectPathItem,
} from 'valibot';

/*
 * The schema library of every runtime schema (`import * as v from '@shared/validation/valibot'`):
 * valibot, whose schemas are plain objects, so building the handlers' schemas at module load costs
 * next to nothing on a cold start (docs/performance.md), and esbuild keeps only the functions a
 * bundle uses. A namespace re-export, so that tree-shaking still works.
 *
 * Its default messages quote the input ("Expected string but received "0244123456""), which would put
 * account numbers and keys in logs. This module replaces them, for every schema of the process, with
 * the words below, which name the rule and never a value. A schema's own message still wins.
 */

/** What a value is, in words, without its content. */
function kindOf(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  if (typeof input === 'number' && Number.isNaN(input)) return 'not a number';
  if (typeof input === 'object') return 'an object';
  return `a ${typeof input}`;
}

/** valibot's names of what a schema expects, as an operator reads them. */
const EXPECTED_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  Object: 'a JSON object',
  Array: 'an array',
};

/** Whether the issue is a key a strict object does not have (its path names that key). */
export function isUnknownKey(issue: BaseIssue<unknown>): boolean {
  return issue.type === 'strict_object' && issue.expected === 'never' && issue.path?.at(-1)?.origin === 'key';
}

/** The words of an issue whose schema or action has no message of its own; never the input's value. */
function issueWords(issue: BaseIssue<unknown>): string {
  const { type, input, expected, requirement } = issue;
  if (issue.kind === 'schema') {
    if (isUnknownKey(issue)) return 'is not an expected field';
    if (input === undefined) return 'is missing';
    if (type === 'literal') return `must be ${expected ?? 'the one allowed value'}`;
    if (type === 'picklist' || type === 'union') return `must be one of ${(expected ?? '').replace(/^\((.*)\)$/, '$1').split(' | ').join(', ')}`;
    return `must be ${EXPECTED_WORDS[expected ?? ''] ?? expected ?? 'of another type'} (got ${kindOf(input)})`;
  }
  const unit = typeof input === 'string' ? 'characters' : 'items';
  switch (type) {
    case 'min_length':
      return requirement === 1 && (input === '' || (Array.isArray(input) && input.length === 0)) ? 'is empty' : `must be at least ${String(requirement)} ${unit}`;
    case 'max_length':
      return `must be at most ${String(requirement)} ${unit}`;
    case 'max_entries':
      return `must have at most ${String(requirement)} keys`;
    case 'regex':
      return `must match ${String(requirement)}`;
    case 'integer':
      return 'must be a whole number';
    case 'min_value':
      return `must be at least ${String(requirement)}`;
    case 'max_value':
      return `must be at most ${String(requirement)}`;
    case 'gt_value':
      return `must be greater than ${String(requirement)}`;
    default:
      return `is not valid (${type})`;
  }
}

setGlobalMessage(issueWords);

/**
 * The schema with arrays refused: valibot's object and record schemas take any `typeof "object"`, so
 * `[]` would pass as an object without keys (a provider answer, a payout's metadata), where JSON
 * means an object. The issue reads "must be a JSON object (got an array)".
 */
function refusingArrays<S extends GenericSchema>(schema: S): S {
  const run = schema['~run'];
  return _standardSchema({
    ...schema,
    '~run'(dataset, config) {
      if (!Array.isArray(dataset.value)) return run.call(this, dataset, config);
      _addIssue(this as never, 'type', dataset, config);
      return dataset;
    },
  } as S);
}

/* These four replace valibot's own under the same names for every schema of the project. */
/** valibot's `object`, refusing arrays. */
export const object = ((...args: Parameters<typeof anyObject>) => refusingArrays(anyObject(...args))) as typeof anyObject;
/** valibot's `looseObject`, refusing arrays. */
export const looseObject = ((...args: Parameters<typeof anyLooseObject>) => refusingArrays(anyLooseObject(...args))) as typeof anyLooseObject;
/** valibot's `strictObject`, refusing arrays. */
export const strictObject = ((...args: Parameters<typeof anyStrictObject>) => refusingArrays(anyStrictObject(...args))) as typeof anyStrictObject;
/** valibot's `record`, refusing arrays. */
export const record = ((...args: Parameters<typeof anyRecord>) => refusingArrays(anyRecord(...args))) as typeof anyRecord;

/**
 * The path of `object[key]`, for an issue that a check of the whole object (`v.rawCheck`) reports
 * about one of its keys: `addIssue({ message, ...issueAt(env, 'KYC_TABLE_NAME') })`.
 */
export function issueAt(object: object, key: string): { path: [ObjectPathItem] } {
  const input = object as Record<string, unknown>;
  return { path: [{ type: 'object', origin: 'value', input, key, value: input[key] }] };
}

/** Where an issue is, as `a.b.0`, or `(root)` for an issue of the whole value. */
export function issuePath(issue: BaseIssue<unknown>): string {
  return getDotPath(issue) || '(root)';
}

/**
 * Issues as one line, `FIELD: message; ...`: how config, queue messages and secrets report what is
 * wrong, naming fields and rules, never values.
 */
export function describeIssues(issues: readonly BaseIssue<unknown>[]): string {
  return issues.map((issue) => `${issuePath(issue)}: ${issue.message}`).join('; ');
}

export * from 'valibot';
