import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as HarnessModule from './harness';
import type { Harness, WorkerHandler } from './harness';

/*
 * The worker traced as in Lambda: X-Ray on (AWS_EXECUTION_ENV, LAMBDA_TASK_ROOT, a sampled trace
 * header), its segments sent to a UDP "daemon" this test listens on. The X-Ray SDK streams each
 * closed subsegment there, so the test reads what AWS X-Ray would receive: the handler segment,
 * the captured SDK clients and the provider calls named by operation under it. Everything is
 * imported after the environment is set, since the tracer decides at module load.
 */

interface SubsegmentDocument {
  id: string;
  name: string;
  parent_id?: string;
  namespace?: string;
  fault?: boolean;
  error?: boolean;
  subsegments?: SubsegmentDocument[];
}

let daemon: Socket;
const documents: SubsegmentDocument[] = [];
let h: Harness;
let worker: WorkerHandler;
let harness: typeof HarnessModule;

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (packet) => {
    // Each packet: a header line, then one JSON segment document.
    const body = packet.toString('utf8').split('\n').slice(1).join('\n');
    documents.push(JSON.parse(body) as SubsegmentDocument);
  });
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  Object.assign(process.env, {
    POWERTOOLS_TRACE_ENABLED: 'true',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    LAMBDA_TASK_ROOT: process.cwd(),
    _HANDLER: 'index.handler',
    _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
    AWS_XRAY_LOG_LEVEL: 'silent',
  });
  harness = await import('./harness');
  h = await harness.startHarness();
  worker = await harness.loadWorker();
});
afterAll(async () => {
  await h?.stop();
  daemon?.close();
});

/** Every subsegment sent, nested ones included. */
function flatten(docs: readonly SubsegmentDocument[]): SubsegmentDocument[] {
  return docs.flatMap((d) => [d, ...flatten(d.subsegments ?? [])]);
}

async function sent(predicate: (all: SubsegmentDocument[]) => boolean): Promise<SubsegmentDocument[]> {
  for (let i = 0; i < 50 && !predicate(flatten(documents)); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return flatten(documents);
}

describe('X-Ray tracing of the payout worker', () => {
  it('traces the invocation, the SDK calls and each provider call by operation under the handler segment', async () => {
    const { payoutRequestEvent } = await import('@test/factories/sqs-events');
    const r = harness.request();
    const response = await worker(payoutRequestEvent([r]), harness.workerContext());
    expect(response.batchItemFailures).toEqual([]);

    const all = await sent((docs) => docs.some((d) => d.name === '## index.handler'));
    const handlerSegment = all.find((d) => d.name === '## index.handler');
    expect(handlerSegment).toBeDefined();
    const under = all.filter((d) => d.parent_id === handlerSegment?.id || handlerSegment?.subsegments?.includes(d));
    const names = under.map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(['verifyAccount', 'payout', 'DynamoDB', 'SecretsManager']));
    for (const call of under.filter((d) => d.name === 'verifyAccount' || d.name === 'payout')) {
      expect(call).toMatchObject({ namespace: 'remote' });
      expect(call.fault ?? call.error ?? false).toBe(false);
    }
    expect(harness.ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('records a failed provider call on its span', async () => {
    documents.length = 0;
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, errorStatus: 503, times: 1 });
    const { payoutRequestEvent } = await import('@test/factories/sqs-events');
    const response = await worker(payoutRequestEvent([harness.request()]), harness.workerContext());
    expect(response.batchItemFailures).toHaveLength(1);
    const all = await sent((docs) => docs.some((d) => d.name === '## index.handler'));
    const failed = all.find((d) => d.name === 'verifyAccount');
    expect(failed?.fault || failed?.error).toBe(true);
    h.sim.admin.clearFaults();
  });
});
