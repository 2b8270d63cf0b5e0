import { execFileSync } from 'node:child_process';
import type { Browser } from 'puppeteer-core';
import type { Target } from '@cli/target';
import type { LocalStack } from '@local/stack';
import type { PayoutRequest } from '@shared/messages/payout-request';
import { silentLog } from '@test/factories/ports';

/*
 * What the console's browser test and the screenshot script share: a headless Chromium that arrives
 * with `npm ci` (or the system one), and a small scenario on a local stack.
 */

/** Flags for Chromium on a closed network: no background calls that the network would refuse. */
const QUIET_FLAGS = ['--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-gpu'];

function systemChromium(): string | undefined {
  try {
    return execFileSync('which', ['chromium'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Launches headless Chromium: a `chromium` on PATH when there is one, else the build inside
 * @sparticuz/chromium (a devDependency, so `npm ci` brings it). Never downloads; a failure to launch
 * throws, so the browser tests fail rather than skip.
 */
export async function launchBrowser(): Promise<Browser> {
  const puppeteer = (await import('puppeteer-core')).default;
  const system = systemChromium();
  if (system) {
    return puppeteer.launch({ executablePath: system, headless: true, args: ['--no-sandbox', ...QUIET_FLAGS] });
  }
  const chromium = (await import('@sparticuz/chromium')).default;
  // Its serverless defaults turn web security off; the console's tests want a browser that enforces it.
  const args = chromium.args.filter((a) => a !== '--disable-web-security' && a !== '--allow-running-insecure-content');
  return puppeteer.launch({ executablePath: await chromium.executablePath(), headless: true, args: [...args, ...QUIET_FLAGS] });
}

/** A beneficiary name as hostile as a provider could send it: if it ever ran, `window.__pwned` would be set. */
export const HOSTILE_NAME = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';

/** The local stack as a CLI target. */
export function targetOf(stack: LocalStack): Target {
  return { kind: 'local', label: 'local stack (test)', env: stack.env, urls: stack.urls };
}

export interface ConsoleScenario {
  readonly runId: string;
  /** A payout that succeeded. */
  readonly succeeded: string;
  /** A payout to the account whose name at the provider is {@link HOSTILE_NAME}. */
  readonly hostile: string;
  /** A payout whose expected name did not match. */
  readonly rejected: string;
  /** A payout to the simulator's always-failing account: FAILED, the provider's record says so (retry). */
  readonly failed: string;
  /** A payout nothing processed in time: NEEDS_REVIEW, unknown to the provider (resolve). */
  readonly review: string;
  /** The withdrawal_reference of a payout request waiting in the DLQ (redrive). */
  readonly deadLetter: string;
  /** The withdrawal_reference an order notification in the quarantine names (signed with {@link PROVIDER_PROFILE}). */
  readonly quarantined: string;
  /** The order id of a collection order created through the payout service (the simulator). */
  readonly collection: string;
  /** A collection whose EXPIRED a later COMPLETED contradicts. */
  readonly contradictedCollection: string;
}

/** A signing scheme the stack is not set to, as a provider that signs differently would use it: its notifications are quarantined. */
export const PROVIDER_PROFILE = 'sha512-secret-body/compact-sorted/base64/orderNotification=partner';

/** The reason the scenario's DLQ message carries, as the worker writes one. */
export const DEAD_LETTER_REASON = 'gave up after 5 receives: the payout service did not answer';

/**
 * A lean scenario on a running local stack: the simulator gets an account named {@link HOSTILE_NAME},
 * then a few payouts go through the real enqueue, worker, simulator and reconciler until every one is
 * final (one to an account whose payouts fail). Beside them, the exceptions an operator settles: a
 * payout accepted but never processed, handed to review as the reconciler does, and a payout request
 * in the DLQ with the worker's kind of reason, and an order notification signed with a scheme the
 * stack is not set to (quarantined), and a collection order created through the payout service.
 * Seconds, not minutes.
 */
export async function runConsoleScenario(stack: LocalStack, timeoutMs = 40_000): Promise<ConsoleScenario> {
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  const sqsClient = (await import('@shared/adapters/sqs-client')).sqsClient();
  const { enqueuePayouts } = await import('@cli/enqueue');
  const { isFinal } = await import('@shared/domain/payout');
  const { acceptRequest } = await import('@shared/messages/payout-request');
  const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
  const merchant = stack.providerSecret?.platform_merchant_id as string;
  stack.simulator?.admin.addAccount({ account_code: '058', account_number: '0666666666', account_name: HOSTILE_NAME, currencies: ['NGN'] });
  const runId = Date.now().toString(36);
  const ref = (n: number): string => `CONSOLE-${runId}-${n}`;
  const base = { version: 1 as const, platform_merchant_id: merchant };
  const requests: PayoutRequest[] = [
    { ...base, currency: 'NGN', withdrawal_reference: ref(1), amount: '120.00', account_code: '057', account_number: '0123456789', expected_name: 'Adaeze Okafor' },
    { ...base, currency: 'NGN', withdrawal_reference: ref(2), amount: '75.50', account_code: '058', account_number: '0666666666' },
    { ...base, currency: 'GHS', withdrawal_reference: ref(3), amount: '40.00', account_code: 'MTN', account_number: '0244123456', expected_name: 'Ama Serwaa' },
    { ...base, currency: 'GHS', withdrawal_reference: ref(4), amount: '18.25', account_code: '030', account_number: '1020304050' },
    { ...base, currency: 'NGN', withdrawal_reference: ref(5), amount: '33.00', account_code: '057', account_number: '0999999999' },
  ];
  const repository = createPayoutRepository(stack.env.PAYOUTS_TABLE_NAME as string);
  await enqueuePayouts(requests, { repository, sqs: sqsClient, queueUrl: stack.queueUrls.payouts });
  const stuck: PayoutRequest = { ...base, currency: 'NGN', withdrawal_reference: ref(6), amount: '64.00', account_code: '058', account_number: '0111222333' };
  const accepted = await repository.createAccepted(acceptRequest(stuck, new Date()));
  await repository.save(accepted.payout, accepted.payout.needsReview('not processed within the review window', new Date()));
  const dead: PayoutRequest = { ...base, currency: 'GHS', withdrawal_reference: ref(7), amount: '12.00', account_code: '030', account_number: '1020304050' };
  await sqsClient.send(
    new SendMessageCommand({
      QueueUrl: stack.queueUrls.deadLetter,
      MessageBody: JSON.stringify(dead),
      MessageAttributes: { reason: { DataType: 'String', StringValue: DEAD_LETTER_REASON } },
    }),
  );
  const { resolveSigningProfile, withSignature } = await import('@shared/signing');
  const secrets = { partnerSecret: stack.providerSecret?.partner_secret_key as string, merchantSecret: stack.providerSecret?.merchant_secret_key as string };
  // Its beneficiary's numbers in the spellings a name-and-string match missed: a JSON number, an array, phoneNumber.
  const beneficiary = { account_number: 1234567890, accountNumber: ['5555666677'], phoneNumber: '+233244123456', amount: 250075 };
  const notification = { status: 'success', message: 'Order notification', data: { payment: { status: 'PAID' }, order_details: { status: 'COMPLETED', partner_order_id: ref(8) }, beneficiary } };
  const quarantinedAnswer = await fetch(stack.urls.payoutNotification, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.providerSecret?.partner_public_key}` },
    body: JSON.stringify(withSignature(notification, 'orderNotification', secrets, resolveSigningProfile(PROVIDER_PROFILE))),
  });
  if (quarantinedAnswer.status !== 401) throw new Error(`console scenario: a notification signed with another scheme got ${quarantinedAnswer.status}, not 401 (quarantined)`);
  const { createCollectionRepository } = await import('@shared/adapters/collection-repository');
  const { applyCollectionNotice, createCollection } = await import('@shared/app/collections');
  const { payoutServiceFor } = await import('@cli/operator');
  const payoutService = await payoutServiceFor(targetOf(stack));
  const collections = createCollectionRepository({ tableName: stack.env.COLLECTIONS_TABLE_NAME as string });
  const clock = { now: () => new Date() };
  try {
    for (const partnerOrderId of [ref(9), ref(10)]) {
      await createCollection({ collections, ...payoutService, clock, log: silentLog }, { partnerOrderId, amount: '40.00', currency: 'GHS' });
    }
  } finally {
    payoutService.provider.close();
  }
  // Two notifications with different final order statuses, as the applier would apply them.
  const projection = { collections, clock, log: silentLog, telemetry: { count: () => {}, seconds: () => {} } };
  await applyCollectionNotice(projection, ref(10), { orderStatus: 'EXPIRED', paymentStatus: 'PENDING', eventId: `${runId}-expired` });
  await applyCollectionNotice(projection, ref(10), { orderStatus: 'COMPLETED', paymentStatus: 'PAID', eventId: `${runId}-completed` });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const payouts = await Promise.all(requests.map((r) => repository.get(r)));
    if (payouts.every((p) => p !== undefined && isFinal(p.state))) break;
    if (Date.now() > deadline) {
      throw new Error(`console scenario: payouts not final after ${timeoutMs} ms: ${payouts.map((p) => p?.state).join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return { runId, succeeded: ref(1), hostile: ref(2), rejected: ref(3), failed: ref(5), review: ref(6), deadLetter: ref(7), quarantined: ref(8), collection: ref(9), contradictedCollection: ref(10) };
}
