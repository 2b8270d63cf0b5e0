import { describe, expect, it } from 'vitest';
import { DEFAULT_STATUS_MAP, StatusMapError, mapProviderStatus, parseStatusMap } from '@shared/providers/status-map';

describe('mapProviderStatus', () => {
  it.each([
    ['COMPLETED', 'succeeded'],
    ['SUCCESSFUL', 'succeeded'],
    ['successful', 'succeeded'],
    ['FAILED', 'failed'],
    ['PENDING', 'in_progress'],
    ['INITIATED', 'in_progress'],
    ['GATEWAY_ERROR', 'unrecognized'],
    ['UPSTREAM_GATEWAY_ERROR', 'unrecognized'],
    ['GATEWAY_NOT_AVAILABLE', 'unrecognized'],
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

  it.each([
    ['{', /not valid JSON/],
    ['[]', /must be a JSON object/],
    ['"x"', /must be a JSON object/],
    ['{"PAID":"success"}', /maps PAID to "success"; allowed: succeeded, failed, reversed, in_progress, unrecognized/],
    ['{"PAID":true}', /maps PAID to true/],
    ['{"":"failed"}', /word "" must be/],
  ])('rejects %j', (json, message) => {
    expect(() => parseStatusMap(json)).toThrow(StatusMapError);
    expect(() => parseStatusMap(json)).toThrow(message);
  });
});
