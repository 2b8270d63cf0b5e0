import { describe, expect, it } from 'vitest';
import * as v from '@shared/validation/valibot';
import { BadRequestError, day, isoTime, parseInput, requiredText } from '@cli/console/query';

/** The 400 line parseInput gives for `form`, or undefined when the form is valid. */
function problemOf(schema: v.GenericSchema, form: unknown): string | undefined {
  try {
    parseInput(schema, form);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    return (error as Error).message;
  }
}

describe('console form parsing', () => {
  const replayForm = v.object({ since: isoTime, until: isoTime });

  it('says what is wrong with a field once, even when several of its checks fail', () => {
    // "nope" fails both the time pattern and the calendar-day check of isoTime.
    expect(problemOf(replayForm, { since: 'nope', until: '2026-11-20T10:00:00Z' })).toBe('since: must be an ISO-8601 time such as 2026-11-20T10:00:00Z');
    expect(problemOf(v.object({ day }), { day: 'abc' })).toBe('day: must be a day as YYYY-MM-DD');
    expect(problemOf(v.object({ day }), { day: '2026-02-30' })).toBe('day: is not a calendar day');
  });

  it('still names every wrong field, one line each', () => {
    expect(problemOf(replayForm, { since: 'nope', until: 'later' })).toBe(
      'since: must be an ISO-8601 time such as 2026-11-20T10:00:00Z; until: must be an ISO-8601 time such as 2026-11-20T10:00:00Z',
    );
    expect(problemOf(v.object({ evidence: requiredText(10), since: isoTime }), { evidence: ' ' })).toBe('evidence: is required; since: is missing');
  });

  it("names a field by the label its page gives it, and a field without one by its name", () => {
    expect(() => parseInput(replayForm, { since: 'nope', until: 'later' }, { since: 'Received from' })).toThrow(
      'Received from: must be an ISO-8601 time such as 2026-11-20T10:00:00Z; until: must be an ISO-8601 time such as 2026-11-20T10:00:00Z',
    );
  });

  it('accepts a valid form', () => {
    expect(problemOf(replayForm, { since: '2026-11-20T10:00:00Z', until: '2026-11-21T10:00:00+01:00' })).toBeUndefined();
  });
});
