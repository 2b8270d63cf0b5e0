import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { startSimulator, type PartnerCredentials, type SimulatorHandle } from '@simulator/index';
import { lambdaContext } from '@test/factories/http-events';
import { takeAllMessages } from '@test/support/queues';

/*
 * What the hostile-input tests run against: the real handler modules in process, on dynalite,
 * fauxqs and the secrets stand-in, with the simulator as the payout service. Log lines the
 * handlers write while thousands of hostile requests go by are captured (and checked) instead of
 * flooding the test output.
 */

/** The KYC callback token the tests hold; anything else is a forgery. */
export const HOSTILE_CALLBACK_TOKEN = 'hostile-test-callback-token-0123456789';
export const HOSTILE_APP_ID = 'app-hostile-1';
export const HOSTILE_MERCHANT = 'merchant-hostile-1';

type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

export interface HostileStack {
  sim: SimulatorHandle;
  aws: LocalAws;
  partner: PartnerCredentials;
  kycCallback(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2>;
  payoutNotification(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2>;
  worker(event: SQSEvent): Promise<SQSBatchResponse>;
  /** Every item of the three tables, keyed by table then pk. */
  snapshot(): Promise<Record<string, Map<string, Record<string, unknown>>>>;
  /** Receives and deletes every message on the DLQ. */
  drainDeadLetters(): Promise<Message[]>;
  /** Log lines written by the handlers since the stack started (JSON lines of the Powertools logger). */
  logLines: string[];
  stop(): Promise<void>;
}

/** Swallows the Powertools logger's JSON lines (kept in `lines`); anything else passes through. */
function captureLogLines(lines: string[]): () => void {
  const streams = [process.stdout, process.stderr] as const;
  const originals = streams.map((s) => s.write.bind(s));
  streams.forEach((stream, i) => {
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
      // Structured log lines are kept; Powertools metrics' "nothing to publish" warnings (metrics are off) dropped.
      if (text.startsWith('{') || text.startsWith('No application metrics to publish')) {
        if (text.startsWith('{')) lines.push(...text.split('\n').filter((l) => l !== ''));
        const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
        callback?.();
        return true;
      }
      return (originals[i] as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
  });
  return () => {
    streams.forEach((stream, i) => {
      stream.write = originals[i] as typeof stream.write;
    });
  };
}

export async function startHostileStack(stage: string): Promise<HostileStack> {
  const logLines: string[] = [];
  const restore = captureLogLines(logLines);
  const sim = await startSimulator();
  const partner = sim.admin.createPartner({ partner_code: `HOSTILE-${stage}`, email: `${stage}@hostile.test`, platform_merchant_id: HOSTILE_MERCHANT });
  const aws = await startLocalAws({
    stage,
    secrets: { provider: { ...partner }, kyc: { app_id: HOSTILE_APP_ID, callback_token: HOSTILE_CALLBACK_TOKEN } },
  });
  Object.assign(process.env, aws.env, {
    PAYOUT_API_BASE_URL: sim.payoutBaseUrl,
    KYC_API_BASE_URL: sim.kycBaseUrl,
    PROVIDER_TIMEOUT_MS: '2000',
    POWERTOOLS_LOG_LEVEL: 'INFO',
  });
  // Handlers read their configuration at module load: import them only now.
  const kyc = (await import('@functions/kyc-callback')) as { handler: HttpHandler };
  const notification = (await import('@functions/payout-notification')) as { handler: HttpHandler };
  const worker = (await import('@functions/payout-worker')) as { handler: SqsHandler };

  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const region = aws.env.AWS_REGION;
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region, endpoint: aws.endpoints.dynamodb, credentials }));
  const sqs = new SQSClient({ region, endpoint: aws.endpoints.sqs, credentials, useQueueUrlAsEndpoint: false });
  const tables = [aws.names.payoutsTable, aws.names.eventsTable, aws.names.kycTable];

  return {
    sim,
    aws,
    partner,
    logLines,
    kycCallback: (event) => kyc.handler(event, lambdaContext('kyc-callback')),
    payoutNotification: (event) => notification.handler(event, lambdaContext('payout-notification')),
    worker: (event) => worker.handler(event, lambdaContext('payout-worker')),
    async snapshot() {
      const out: Record<string, Map<string, Record<string, unknown>>> = {};
      for (const table of tables) {
        const items = new Map<string, Record<string, unknown>>();
        let start: Record<string, unknown> | undefined;
        do {
          const page = await doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
          for (const item of page.Items ?? []) items.set(String(item.pk), item);
          start = page.LastEvaluatedKey;
        } while (start);
        out[table] = items;
      }
      return out;
    },
    drainDeadLetters: () => takeAllMessages(sqs, aws.queueUrls.deadLetter),
    async stop() {
      restore();
      doc.destroy();
      sqs.destroy();
      await sim.stop();
      await aws.stop();
    },
  };
}

/** Requests per route in `npm test`; PAYRELAY_FUZZ_REQUESTS raises it (e.g. 20000 for a long soak). */
export function requestCount(defaultCount: number): number {
  const raw = Number(process.env.PAYRELAY_FUZZ_REQUESTS ?? '');
  return Number.isInteger(raw) && raw > 0 ? raw : defaultCount;
}
