import { describe, expect, it } from 'vitest';
import { normalizeKycDecision, normalizeKycPhase } from '@shared/domain/kyc-status';

describe('normalizeKycPhase', () => {
  it.each([
    ['init', 'initiated'],
    ['initialized', 'initiated'],
    ['started', 'initiated'],
    ['INIT', 'initiated'],
    [' Pending ', 'pending'],
    ['completed', 'completed'],
    ['COMPLETED', 'completed'],
  ])('%j -> %s', (word, phase) => {
    expect(normalizeKycPhase(word)).toBe(phase);
  });

  it.each(['', 'done', 'approved', 'constructor', 'toString'])('%j is unknown', (word) => {
    expect(normalizeKycPhase(word)).toBeUndefined();
  });
});

describe('normalizeKycDecision', () => {
  it.each([
    ['awaiting_approval', 'awaiting_approval'],
    ['Awaiting Approval', 'awaiting_approval'],
    ['APPROVED', 'approved'],
    ['rejected', 'rejected'],
  ])('%j -> %s', (word, decision) => {
    expect(normalizeKycDecision(word)).toBe(decision);
  });

  it.each(['', 'approve', 'completed', '__proto__'])('%j is unknown', (word) => {
    expect(normalizeKycDecision(word)).toBeUndefined();
  });
});
