import { describe, expect, it } from 'vitest';
import { DEFAULT_STATUS_MAP, StatusMapError, describeStatusMap, mapProviderStatus, parseStatusMap } from '@shared/providers/status-map';

describe('mapProviderStatus', () => {
  it.each([
    ['COMPLETED', 'succeeded'],
    ['SUCCESSFUL', 'succeeded'],
    ['successful', 'succeeded'],
    ['FAILED', 'failed'],
    ['PENDING', 'in_progress'],
    ['INITIATED', 'in_progress'],
    ['GATEWAY_ERROR', 'gateway_error'],
    ['UPSTREAM_GATEWAY_ERROR', 'gateway_error'],
    ['gateway_not_available', 'gateway_error'],
    ['SUCCESS', 'unrecognized'],
    ['', 'unrecognized'],
    ['constructor', 'unrecognized'],
    ['__proto__', 'unrecognized'],
  ])('%j -> %s', (word, outcome) => {
    expect(mapProviderStatus(word)).toBe(outcome);
  });

  it('handles missing words', () => {
    expect(mapProviderStatus(undefined)).toBe('unrecognized');
    expect(mapProviderStatus(null)).toBe('unrecognized');
  });
});

describe('parseStatusMap', () => {
  it('defaults when empty', () => {
    expect(parseStatusMap(undefined)).toBe(DEFAULT_STATUS_MAP);
    expect(parseStatusMap('  ')).toBe(DEFAULT_STATUS_MAP);
  });

  it('extends and overrides the default table', () => {
    const map = parseStatusMap('{"paid":"succeeded","SUCCESSFUL":"unrecognized"}');
    expect(mapProviderStatus('PAID', map)).toBe('succeeded');
    expect(mapProviderStatus('SUCCESSFUL', map)).toBe('unrecognized');
    expect(mapProviderStatus('COMPLETED', map)).toBe('succeeded');
    expect(mapProviderStatus('SOMETHING_NEW', map)).toBe('unrecognized');
  });

  it('maps a word to a gateway error, or takes a GATEWAY_* word out of that class', () => {
    const map = parseStatusMap('{"BANK_TIMEOUT":"gateway_error","GATEWAY_ERROR":"in_progress"}');
    expect(mapProviderStatus('bank_timeout', map)).toBe('gateway_error');
    expect(mapProviderStatus('GATEWAY_ERROR', map)).toBe('in_progress');
    expect(mapProviderStatus('UPSTREAM_GATEWAY_ERROR', map)).toBe('gateway_error');
  });

  it.each([
    ['{', /not valid JSON/],
    ['[]', /must be a JSON object/],
    ['"x"', /must be a JSON object/],
    ['{"PAID":"success"}', /maps PAID to "success"; allowed: succeeded, failed, reversed, in_progress, gateway_error, unrecognized/],
    ['{"PAID":true}', /maps PAID to true/],
    ['{"":"failed"}', /word "" must be/],
  ])('rejects %j', (json, message) => {
    expect(() => parseStatusMap(json)).toThrow(StatusMapError);
    expect(() => parseStatusMap(json)).toThrow(message);
  });
});

describe('describeStatusMap', () => {
  it('lists the default words by outcome, for the start-up log', () => {
    expect(describeStatusMap(DEFAULT_STATUS_MAP)).toBe(
      'succeeded: COMPLETED SUCCESSFUL; failed: FAILED; reversed: REVERSED REFUNDED REFUND; in_progress: PENDING INITIATED; gateway_error: GATEWAY_ERROR UPSTREAM_GATEWAY_ERROR GATEWAY_NOT_AVAILABLE',
    );
  });

  it('shows an override where it lands', () => {
    expect(describeStatusMap(parseStatusMap('{"PAID":"succeeded","GATEWAY_ERROR":"unrecognized"}'))).toContain(
      'succeeded: COMPLETED SUCCESSFUL PAID;',
    );
    expect(describeStatusMap(parseStatusMap('{"GATEWAY_ERROR":"unrecognized"}'))).toMatch(/gateway_error: UPSTREAM_GATEWAY_ERROR GATEWAY_NOT_AVAILABLE; unrecognized: GATEWAY_ERROR$/);
  });
});
