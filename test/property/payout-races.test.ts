import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RetryLaterError, createProcessPayout } from '@shared/app/process-payout';
import { createReconcilePayouts } from '@shared/app/reconcile-payouts';
import { ConcurrentModificationError } from '@shared/domain/errors';
import type { PayoutProvider, PayoutRepository, PayoutStatusAnswer, ProviderCredentials } from '@shared/ports/payouts';
import type { PayoutIdentity } from '@shared/domain/identity';
import { FINAL_STATES } from '@shared/domain/payout';
import type { PayoutRequest } from '@shared/messages/payout-request';
import {
  ProviderAmbiguousError,
  ProviderRejectedError,
  ProviderUnauthorizedError,
  ProviderUnavailableError,
} from '@shared/providers/provider-errors';
import { memoryRepository } from './memory-repository';
import { fuzzSeed, runs, scaledTimeout } from './runs';
import { PAYOUT_STATE_RANK } from '@test/support/payout-rank';
import { noTelemetry, silentLog, testFingerprints } from '@test/factories/ports';

/*
 * Rule 1 under races, explored by fast-check's scheduler: several deliveries of one payout request
 * and reconciler runs interleave at every storage and provider call, while the provider answers
 * each call with a scripted outcome (accepted, committed then time-out, 5xx before commit, not
 * sent, refused, 401), and the first delivery's worker may die at a boundary of rule 1 (as the chaos
 * crash injector does). The storage is an in-memory stand-in with DynamoDB's conditional-write
 * semantics; the use cases are the real ones. Whatever the interleaving and the outcomes: at most
 * one Payout call reaches the provider, every payout ends final or in review, the state agrees
 * with the provider, and history only moves forward.
 */

type PayoutOutcome = 'accept' | 'commit-then-timeout' | 'error-before-commit' | 'not-sent' | 'refused' | 'unauthorized';
/** AccountVerification's answer: the account holder, another holder (name mismatch), no account, or unreachable. */
type VerifyOutcome = 'holder' | 'other-holder' | 'not-found' | 'unavailable';
type StatusOutcome = 'answer' | 'ambiguous';
/**
 * Where the first delivery's worker dies: right after its create landed (the intent is written, its
 * verification's answer is never used), or at the first write from SUBMITTING that is not a
 * withdrawal (the Payout call's outcome, or the release of an intent whose verification failed), so
 * the intent stays as written whether or not its call reached the provider.
 */
type Crash = 'none' | 'after-create' | 'at-outcome';

/** A worker that died: the invocation ends, nothing after it runs, and SQS delivers the message again. */
class WorkerDied extends Error {
  override name = 'WorkerDied';
}


const credentials: ProviderCredentials = {
  partnerPublicKey: 'pk',
  partnerSecretKey: 'ps',
  merchantSecretKey: 'ms',
  partnerId: 'partner-1',
  platformMerchantId: 'merchant-1',
};

const request: PayoutRequest = {
  version: 1,
  platform_merchant_id: 'merchant-1',
  currency: 'GHS',
  withdrawal_reference: 'wr-race-1',
  amount: '10.00',
  account_number: '0244123456',
  account_code: 'MTN',
  expected_name: 'Kwame Mensah',
};

describe('payout races (property, fast-check scheduler)', () => {
  it('deliveries and reconciler runs interleaved anyhow, with any provider outcomes: one Payout call at most, nothing lost, nothing backwards', async () => {
    // Runs whose first worker died after its create, and after a Payout call that reached the provider.
    const died = { afterCreate: 0, afterReachingCall: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.constantFrom<PayoutOutcome>('accept', 'commit-then-timeout', 'error-before-commit', 'not-sent', 'refused', 'unauthorized'), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.array(fc.constantFrom<StatusOutcome>('answer', 'answer', 'ambiguous'), { maxLength: 6 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        // Seconds the clock moves before each concurrent reconciler run: at most 4.5 minutes in all,
        // inside the 5-minute window in which a SUBMITTING payout may still have a worker in the call.
        fc.array(fc.integer({ min: 0, max: 90 }), { maxLength: 3 }),
        fc.boolean(),
        // Mostly the account holder; sometimes a refusal or an outage after the intent is written.
        fc.array(fc.constantFrom<VerifyOutcome>('holder', 'holder', 'holder', 'other-holder', 'not-found', 'unavailable'), { maxLength: 4 }),
        fc.constantFrom<Crash>('none', 'none', 'after-create', 'at-outcome'),
        async (s, payoutScript, statusScript, settlesAsFailure, deliveries, advances, resubmit, verifyScript, crash) => {
          let clock = Date.parse('2026-03-01T00:00:00.000Z');
          const ledger = { executed: false, settled: undefined as undefined | 'COMPLETED' | 'FAILED', checks: 0, reaching: 0, afterCommit: 0 };
          const repository = memoryRepository();
          // Every storage call yields to the scheduler first; the write itself stays atomic.
          const scheduled = <A extends unknown[], R>(fn: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
            await s.schedule(Promise.resolve());
            return fn(...args);
          };
          const repo: PayoutRepository = {
            get: scheduled(repository.get),
            createAccepted: scheduled(repository.createAccepted),
            save: scheduled(repository.save),
            queryDue: scheduled(repository.queryDue),
            listByState: scheduled(repository.listByState),
            findByReference: scheduled(repository.findByReference),
            markDueNow: scheduled(repository.markDueNow),
            queryChanged: scheduled(repository.queryChanged),
            countInState: scheduled(repository.countInState),
            oldestInState: scheduled(repository.oldestInState),
            reversalWatchProgress: scheduled(repository.reversalWatchProgress),
            saveReversalWatchProgress: scheduled(repository.saveReversalWatchProgress),
          };
          let payoutCalls = 0;
          let statusCalls = 0;
          let verifyCalls = 0;
          const provider: PayoutProvider = {
            verifyAccount: scheduled(async () => {
              const outcome = verifyScript[verifyCalls++] ?? 'holder';
              if (outcome === 'unavailable') throw new ProviderUnavailableError('verifyAccount', 'connection refused');
              if (outcome === 'not-found') return { success: false, message: 'account not found' };
              return { success: true, message: 'ok', data: { account_name: outcome === 'holder' ? 'Kwame Mensah' : 'Esi Darko' } };
            }),
            payout: async () => {
              await s.schedule(Promise.resolve());
              const outcome = payoutScript[payoutCalls++] ?? 'accept';
              if (outcome === 'not-sent') throw new ProviderUnavailableError('payout', 'connection refused');
              if (outcome === 'unauthorized') throw new ProviderUnauthorizedError('payout', 'HTTP 401', { httpStatus: 401 });
              ledger.reaching += 1;
              if (ledger.executed) ledger.afterCommit += 1;
              if (ledger.executed) throw new ProviderRejectedError('payout', 'duplicate', { httpStatus: 409, duplicateReference: true });
              if (outcome === 'refused') throw new ProviderRejectedError('payout', 'refused', { httpStatus: 400, duplicateReference: false });
              if (outcome === 'error-before-commit') throw new ProviderAmbiguousError('payout', 'HTTP 503', { httpStatus: 503 });
              ledger.executed = true;
              await s.schedule(Promise.resolve());
              if (outcome === 'commit-then-timeout') throw new ProviderAmbiguousError('payout', 'time-out after sending');
              return { success: true, data: { status: 'PENDING' } };
            },
            getPayout: async (_identity: PayoutIdentity): Promise<PayoutStatusAnswer> => {
              await s.schedule(Promise.resolve());
              if ((statusScript[statusCalls++] ?? 'answer') === 'ambiguous') throw new ProviderAmbiguousError('getPayout', 'reset');
              if (!ledger.executed) return { found: false, outcome: 'unrecognized' };
              ledger.checks += 1;
              if (ledger.checks >= 2) ledger.settled ??= settlesAsFailure ? 'FAILED' : 'COMPLETED';
              const status = ledger.settled ?? 'PENDING';
              return {
                found: true,
                status,
                outcome: status === 'COMPLETED' ? 'succeeded' : status === 'FAILED' ? 'failed' : 'in_progress',
                raw: { amount: '10.00', currency: 'GHS', status },
              };
            },
          };
          const deps = {
            repository: repo,
            provider,
            credentials: { get: async () => credentials },
            fingerprints: testFingerprints,
            clock: { now: () => new Date(clock) },
            telemetry: noTelemetry,
            log: silentLog,
          };
          const settings = { nameMatchThreshold: 0.85, kycGating: false };
          const processPayout = createProcessPayout({ ...deps, settings });
          // The first delivery's worker, which dies at `crash`.
          const dying: PayoutRepository = {
            ...repo,
            createAccepted: async (payout) => {
              const created = await repo.createAccepted(payout);
              if (crash === 'after-create' && created.created) {
                died.afterCreate += 1;
                throw new WorkerDied('after its create');
              }
              return created;
            },
            save: async (previous, next) => {
              if (crash === 'at-outcome' && previous.state === 'SUBMITTING' && next.state !== 'REJECTED') {
                if (ledger.reaching > 0) died.afterReachingCall += 1;
                throw new WorkerDied('at the outcome write');
              }
              return repo.save(previous, next);
            },
          };
          const firstDelivery = createProcessPayout({ ...deps, repository: dying, settings });
          const reconcile = createReconcilePayouts({
            ...deps,
            settings: { reviewAfterMs: 24 * 3_600_000, notFoundGraceMs: 15 * 60_000, resubmitUnknownNotFound: resubmit, submitStaleMs: 5 * 60_000, concurrency: 2, pageSize: 10, budgetMs: 60_000 },
          });

          const unexpected: string[] = [];
          const deliver = async (process = processPayout): Promise<'done' | 'retry'> => {
            try {
              await process(request);
              return 'done';
            } catch (error) {
              // What SQS redelivers: "try later", losing every conditional write to other writers, or a worker that died.
              if (error instanceof RetryLaterError || error instanceof ConcurrentModificationError || error instanceof WorkerDied) return 'retry';
              unexpected.push(`${(error as Error).name}: ${(error as Error).message}`);
              return 'done';
            }
          };

          // Phase 1: concurrent deliveries and reconciler runs, interleaved by the scheduler.
          const tasks: Array<Promise<unknown>> = [];
          for (let i = 0; i < deliveries; i++) tasks.push(deliver(i === 0 ? firstDelivery : processPayout));
          for (const seconds of advances) {
            tasks.push(
              (async () => {
                await s.schedule(Promise.resolve());
                clock += seconds * 1000;
                return reconcile();
              })(),
            );
          }
          const results = await s.waitFor(Promise.all(tasks));
          // Phase 2: SQS redelivers what asked for it, up to maxReceiveCount.
          let pending = results.filter((r) => r === 'retry').length;
          for (let receive = 2; receive <= 5 && pending > 0; receive++) {
            clock += 30_000;
            const again = Array.from({ length: pending }, () => deliver());
            pending = (await s.waitFor(Promise.all(again))).filter((r) => r === 'retry').length;
          }
          // Phase 3: the reconciler alone, an hour later each time, until nothing is open.
          for (let run = 0; run < 30; run++) {
            clock += 61 * 60_000;
            await s.waitFor(reconcile());
            // With RESUBMIT_UNKNOWN_NOT_FOUND the operator enqueues the original request again.
            if ([...repository.items.values()].some((p) => p.record.resubmitAuthorized)) await s.waitFor(deliver());
            const open = [...repository.items.values()].filter((p) => !p.isFinal);
            if (open.length === 0) break;
          }

          expect(unexpected).toEqual([]);
          // Rule 1: no Payout call after the provider committed one; without resubmission, one call at most.
          expect(ledger.afterCommit).toBe(0);
          if (!resubmit) expect(ledger.reaching).toBeLessThanOrEqual(1);
          const payout = [...repository.items.values()][0];
          expect(payout).toBeDefined();
          const state = payout!.state;
          // A resubmission authorized but never used is open until the review deadline, then handed to a person.
          expect(FINAL_STATES.has(state), `ended ${state}`).toBe(true);
          // The state agrees with the provider.
          if (state === 'SUCCEEDED') expect(ledger.settled).toBe('COMPLETED');
          if (state === 'FAILED') expect(ledger.settled === 'FAILED' || !ledger.executed).toBe(true);
          // REJECTED: no Payout call was ever made, not even one that failed to leave. From SUBMITTING
          // only as the one intent, withdrawn by a writer that knew it.
          if (state === 'REJECTED') {
            expect(ledger.executed).toBe(false);
            expect(payoutCalls).toBe(0);
            const into = payout!.record.history.at(-1);
            if (into?.from === 'SUBMITTING') {
              expect(payout!.record.submitAttempts).toBe(1);
              expect(payout!.record.acknowledgedAt).toBeUndefined();
              expect(into.reason).toMatch(/^intent withdrawn before any Payout call: /);
            }
          }
          if (ledger.settled === 'COMPLETED') expect(['SUCCEEDED', 'NEEDS_REVIEW']).toContain(state);
          // History: one forward chain.
          const history = payout!.record.history;
          for (let i = 1; i < history.length; i++) {
            expect(history[i]!.from).toBe(history[i - 1]!.to);
            expect(PAYOUT_STATE_RANK[history[i]!.to]).toBeGreaterThan(PAYOUT_STATE_RANK[history[i]!.from!]);
          }
        },
      ),
      { numRuns: runs(300), seed: fuzzSeed(), interruptAfterTimeLimit: scaledTimeout(100_000) },
    );
    // The dying workers were exercised: the property above held for them too.
    expect(died.afterCreate).toBeGreaterThan(0);
    expect(died.afterReachingCall).toBeGreaterThan(0);
  }, scaledTimeout(120_000));
});
