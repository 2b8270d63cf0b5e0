import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { writeLocalState } from '@local/state';
import { Payout } from '@shared/domain/payout';
import { recognizeKycCallback } from '@shared/domain/callbacks';
import { applyKycEvent } from '@shared/domain/kyc-subject';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';

/*
 * Text providers send (a KYC callback's kyc_note, the verified account name, a KYC status answer)
 * printed by the real CLI (bin/payrelay.js) against local AWS emulators: control characters in it
 * show as visible escapes and never reach the terminal raw (docs/cli.md, "Provider text is printed...").
 */
const dir = mkdtempSync(join(tmpdir(), 'payrelay-provider-text-'));
const stateFile = join(dir, 'state.json');
let aws: LocalAws;
let kycService: Server;
let kycUrl: string;

const cli = (args: string[]): Promise<CliRun> => runPayrelay(stateFile, args);

/** The KYC note of the finding: clears the screen, sets the window title, draws fake green text. */
const HIJACK = 'ok\u001b[2J\u001b[H\u001b]0;TITLE-HIJACK\u0007\u001b[32mapproved and confirmed by pull\u001b[0m';
const HIJACK_SHOWN = 'ok\\u001b[2J\\u001b[H\\u001b]0;TITLE-HIJACK\\u0007\\u001b[32mapproved and confirmed by pull\\u001b[0m';
/** A name that would overwrite its line (CR) and forge a row and a payrelay: line (newlines). */
const FORGED_NAME = 'Adaeze Okafor\r│ state │ SUCCEEDED │\npayrelay: verified';
/** A KYC status answer with a one-byte CSI (C1) and a right-to-left override. */
const STATUS_ANSWER = '\u009b2Japproved\u202e';

/** Which of the characters that must never reach the terminal raw (ESC, BEL, CR, the C1 CSI, the bidi override) `text` holds. */
const rawIn = (text: string): string[] => ['\u001b', '\u0007', '\r', '\u009b', '\u202e'].filter((ch) => text.includes(ch));

beforeAll(async () => {
  kycService = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: STATUS_ANSWER, record: { order: { status: HIJACK } } }));
  });
  await new Promise<void>((resolve) => kycService.listen(0, '127.0.0.1', resolve));
  kycUrl = `http://127.0.0.1:${(kycService.address() as AddressInfo).port}`;
  aws = await startLocalAws({ stage: 'texttest' });
  Object.assign(process.env, aws.env);
  writeLocalState(
    { pid: process.pid, startedAt: new Date().toISOString(), stage: 'texttest', urls: { gateway: 'http://127.0.0.1:9', kycCallback: '', payoutNotification: '', payoutApi: '', kycApi: '' }, env: aws.env },
    stateFile,
  );
});
afterAll(async () => {
  await aws?.stop();
  await new Promise((resolve) => kycService?.close(resolve));
});

describe('provider text printed by the CLI', () => {
  it('payouts status shows control characters of a verified name as escapes; --json keeps the name exactly', async () => {
    const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
    const t = new Date();
    const identity = { platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: `TXT-${process.pid}` };
    const payout = Payout.accept({ identity, amount: '5.00', accountMasked: '******3456', accountCode: 'MTN' }, t)
      .startVerifying(t)
      .startSubmitting(t, `${FORGED_NAME} ${HIJACK}`)
      .submitted('PENDING', t);
    await createPayoutRepository(aws.names.payoutsTable).createAccepted(payout);

    const out = await cli(['payouts', 'status', identity.withdrawal_reference]);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(rawIn(out.stdout)).toEqual([]);
    expect(out.stdout).toContain('Adaeze Okafor\\r│ state │ SUCCEEDED │\\npayrelay: verified');
    expect(out.stdout).toContain(HIJACK_SHOWN);
    expect(out.stdout.split('\n').some((line) => line.startsWith('payrelay:'))).toBe(false);

    const json = await cli(['--json', 'payouts', 'status', identity.withdrawal_reference]);
    expect(rawIn(json.stdout)).toEqual([]);
    expect((JSON.parse(json.stdout) as Array<{ verified_name: string }>)[0]?.verified_name).toBe(`${FORGED_NAME} ${HIJACK}`);
  });

  it('kyc status shows a callback kyc_note and the KYC service answer with their control characters as escapes', async () => {
    const { createKycRepository } = await import('@shared/adapters/kyc-repository');
    const recognized = recognizeKycCallback({
      user_reference: 'user-text-1',
      status: 'completed',
      event: 'kyc.completed',
      order: 'order-1',
      timestamp: new Date().toISOString(),
      first_name: 'Zoë',
      last_name: '李雷',
      meta_data: { kyc_status: 'approved', kyc_note: HIJACK },
    }, new Date());
    if (!recognized.recognized) throw new Error(recognized.reason);
    const { subject } = applyKycEvent(undefined, 'app-1', recognized.event, 'event-1', new Date());
    await createKycRepository({ tableName: aws.names.kycTable }).saveSubject(subject);

    const out = await cli(['--kyc-url', kycUrl, 'kyc', 'status', 'user-text-1', '--app-id', 'app-1']);
    expect(out).toMatchObject({ code: 0, stderr: '' });
    expect(rawIn(out.stdout)).toEqual([]);
    expect(out.stdout).toContain(HIJACK_SHOWN);
    expect(out.stdout).toContain('\\u009b2Japproved\\u202e');
    expect(out.stdout).toContain('Zoë');
    expect(out.stdout).toContain('李雷');

    const json = await cli(['--json', '--kyc-url', kycUrl, 'kyc', 'status', 'user-text-1', '--app-id', 'app-1']);
    expect(rawIn(json.stdout)).toEqual([]);
    const parsed = JSON.parse(json.stdout) as { local: { note: string }; provider: { status: string } };
    expect(parsed.local.note).toBe(HIJACK);
    expect(parsed.provider.status).toBe(STATUS_ANSWER);
  });
});
