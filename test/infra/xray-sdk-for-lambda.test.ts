import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { PAYRELAY_PROJECT_ROOT } from '@infra/payrelay';
import { BUNDLE_ALIASES, XRAY_SDK_FOR_LAMBDA } from '@infra/payrelay-function';

/*
 * The X-Ray SDK build the Lambda bundles carry (PayrelayFunction aliases `aws-xray-sdk-core` to it)
 * against the installed package and the installed Powertools tracer, so an upgrade of either that
 * needs a member it left out fails here, not in a deployed function.
 */

type Sdk = Record<string, unknown>;
const load = createRequire(import.meta.url);
const full = load('aws-xray-sdk-core') as Sdk;
const forLambda = load(path.join(PAYRELAY_PROJECT_ROOT, XRAY_SDK_FOR_LAMBDA)) as Sdk;

const run = promisify(execFile);

/**
 * What the build leaves out: the AWS SDK v2 and global HTTP/promise patchers, plugins, framework
 * middleware, custom AWS capture rules.
 */
const LEFT_OUT = [
  'plugins',
  'config',
  'captureAWS',
  'captureAWSClient',
  'captureHTTPs',
  'captureHTTPsGlobal',
  'capturePromise',
  'database',
  'middleware',
  'setAWSWhitelist',
  'appendAWSWhitelist',
];

/** The members that are the package's code on other objects (xray-aws-sdk-v3-for-lambda.cjs): compared by behaviour below. */
const REBUILT = ['captureAWSv3Client'];

/** The members the Powertools tracer takes from the SDK (`const { a, b: c } = xraySdk` and `xraySdk.a`). */
function membersPowertoolsTakes(): string[] {
  const dir = path.join(PAYRELAY_PROJECT_ROOT, 'node_modules/@aws-lambda-powertools/tracer/lib/esm');
  const members = new Set<string>();
  for (const file of ['Tracer.js', 'provider/ProviderService.js']) {
    const code = readFileSync(path.join(dir, file), 'utf8');
    expect(code, file).toMatch(/import xraySdk from 'aws-xray-sdk-core'/);
    for (const [, list] of code.matchAll(/const\s*\{([^}]*)\}\s*=\s*xraySdk\b/g)) {
      for (const entry of (list ?? '').split(',')) {
        const name = entry.split(':')[0]?.trim();
        if (name) members.add(name);
      }
    }
    for (const [, name] of code.matchAll(/\bxraySdk\.(\w+)/g)) members.add(name ?? '');
  }
  return [...members];
}

/** An answer of the fake AWS endpoint below: the status and JSON body of one response. */
interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const OK = (body: Record<string, unknown> = {}): Answer => ({ status: 200, body });
const refused = (status: number, type: string): Answer => ({ status, body: { __type: type, message: 'refused' } });

/**
 * Payrelay's SDK calls (the commands shared/adapters sends, with the inputs the capture rules look
 * at) and the answers they meet, refusals and a throttle included: what a traced function records.
 */
type Clients = { documents: DynamoDBDocumentClient; sqs: SQSClient; secrets: SecretsManagerClient };
const CALLS: ReadonlyArray<{ readonly send: (c: Clients) => Promise<unknown>; readonly answer: Answer }> = [
  {
    send: (c) => c.documents.send(new GetCommand({ TableName: 'payouts', Key: { pk: 'p' }, ConsistentRead: true, ProjectionExpression: 'pk' })),
    answer: OK({ Item: { pk: { S: 'p' } }, ConsumedCapacity: { TableName: 'payouts', CapacityUnits: 1 } }),
  },
  {
    send: (c) => c.documents.send(new PutCommand({ TableName: 'payouts', Item: { pk: 'p' }, ConditionExpression: 'attribute_not_exists(pk)' })),
    answer: OK(),
  },
  {
    send: (c) => c.documents.send(new PutCommand({ TableName: 'payouts', Item: { pk: 'p' }, ConditionExpression: 'attribute_not_exists(pk)' })),
    answer: refused(400, 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException'),
  },
  {
    send: (c) => c.documents.send(new UpdateCommand({ TableName: 'payouts', Key: { pk: 'p' }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': 1 } })),
    answer: refused(400, 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException'),
  },
  {
    send: (c) => c.documents.send(new QueryCommand({ TableName: 'payouts', IndexName: 'by-state', KeyConditionExpression: 's = :s', ExpressionAttributeValues: { ':s': 'x' }, Limit: 5, ScanIndexForward: false })),
    answer: OK({ Items: [], Count: 0, ScannedCount: 0 }),
  },
  { send: (c) => c.documents.send(new BatchGetCommand({ RequestItems: { payouts: { Keys: [{ pk: 'p' }] } } })), answer: OK({ Responses: { payouts: [] } }) },
  { send: (c) => c.documents.send(new GetCommand({ TableName: 'payouts', Key: { pk: 'p' } })), answer: refused(500, 'com.amazonaws.dynamodb.v20120810#InternalServerError') },
  { send: (c) => c.sqs.send(new SendMessageCommand({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', MessageBody: 'm', DelaySeconds: 5 })), answer: OK({ MessageId: 'm-1' }) },
  {
    send: (c) =>
      c.sqs.send(new SendMessageBatchCommand({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', Entries: [{ Id: '0', MessageBody: 'a' }, { Id: '1', MessageBody: 'b' }] })),
    answer: OK({ Successful: [{ Id: '0', MessageId: 'm-0', MD5OfMessageBody: 'x' }], Failed: [{ Id: '1', SenderFault: true, Code: 'X' }] }),
  },
  { send: (c) => c.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', ReceiptHandle: 'r', VisibilityTimeout: 30 })), answer: OK() },
  {
    send: (c) => c.sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', Entries: [{ Id: '0', ReceiptHandle: 'r', VisibilityTimeout: 0 }] })),
    answer: OK({ Successful: [{ Id: '0' }], Failed: [] }),
  },
  { send: (c) => c.sqs.send(new ReceiveMessageCommand({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', MaxNumberOfMessages: 10 })), answer: OK({ Messages: [] }) },
  { send: (c) => c.sqs.send(new DeleteMessageCommand({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', ReceiptHandle: 'r' })), answer: refused(400, 'com.amazonaws.sqs#ThrottlingException') },
  { send: (c) => c.sqs.send(new GetQueueAttributesCommand({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', AttributeNames: ['All'] })), answer: OK({ Attributes: {} }) },
  { send: (c) => c.secrets.send(new GetSecretValueCommand({ SecretId: 'payrelay/provider' })), answer: OK({ Name: 'payrelay/provider', SecretString: '{}' }) },
];

/**
 * Sends every call of CALLS through clients captured by `capture` under one segment, against an
 * endpoint that answers as CALLS say, and returns what the segment recorded (ids and times aside)
 * and the trace headers the requests carried (ids aside).
 */
async function recorded(capture: (client: unknown) => unknown): Promise<unknown[]> {
  const answers = CALLS.map((call) => call.answer);
  const headers: string[] = [];
  const requestHandler = {
    handle: async (request: { headers: Record<string, string> }) => {
      headers.push((request.headers['X-Amzn-Trace-Id'] ?? '').replace(/[0-9a-f]{8,}/g, 'id'));
      const answer = answers.shift() as Answer;
      const body = Buffer.from(JSON.stringify(answer.body));
      const response = { statusCode: answer.status, headers: { 'x-amzn-requestid': `request-${headers.length}`, 'content-length': String(body.length) }, body: Readable.from([body]) };
      return { response };
    },
    updateHttpClientConfig: () => undefined,
    httpHandlerConfigs: () => ({}),
  };
  const config = { region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1, requestHandler };
  const clients: Clients = {
    documents: DynamoDBDocumentClient.from(capture(new DynamoDBClient(config)) as DynamoDBClient),
    sqs: capture(new SQSClient({ ...config, useQueueUrlAsEndpoint: false, md5: false })) as SQSClient,
    secrets: capture(new SecretsManagerClient(config)) as SecretsManagerClient,
  };
  const Segment = full.Segment as new (name: string) => { subsegments?: unknown[] };
  const segment = new Segment('invocation');
  const namespace = (full.getNamespace as () => { runPromise: (fn: () => Promise<void>) => Promise<void> })();
  await namespace.runPromise(async () => {
    (full.setSegment as (s: unknown) => void)(segment);
    for (const call of CALLS) await call.send(clients).catch(() => undefined);
  });
  const subsegments = (segment.subsegments ?? []).map((sub) => {
    const { id: _id, start_time: _start, end_time: _end, cause, ...rest } = JSON.parse(JSON.stringify(sub)) as Record<string, unknown>;
    const exceptions = (cause as { exceptions?: Array<Record<string, unknown>> } | undefined)?.exceptions?.map(({ id: _e, stack: _s, ...e }) => e);
    return { ...rest, ...(cause ? { exceptions } : {}) };
  });
  return [subsegments, headers];
}

describe("the X-Ray SDK's Lambda build", () => {
  it("keeps each member of the package's entry as the package's own object, or leaves it out with a clear error", () => {
    for (const name of Object.keys(full)) {
      if (REBUILT.includes(name)) {
        expect(typeof forLambda[name], name).toBe('function');
        continue;
      }
      if (!LEFT_OUT.includes(name)) {
        expect(forLambda[name], name).toBe(full[name]);
        continue;
      }
      const member = forLambda[name];
      if (member === undefined) continue;
      expect(typeof member, name).toBe('function');
      expect(() => (member as () => void)(), name).toThrow(/left out of payrelay's Lambda build of the X-Ray SDK/);
    }
    expect(Object.keys(forLambda).filter((name) => !(name in full))).toEqual([]);
  });

  it('gives the Powertools tracer every member it calls with payrelay settings, as the package has it', () => {
    const taken = membersPowertoolsTakes();
    // Powertools destructures the v2 client patchers and the global HTTP patcher at load, and calls
    // the latter only with captureHTTPsRequests on, which shared/observability/tracer.ts turns off.
    const neverCalled = ['captureAWS', 'captureAWSClient', 'captureHTTPsGlobal'];
    expect(taken).toEqual(expect.arrayContaining(['captureAWSv3Client', 'getSegment', 'setSegment', 'Subsegment', ...neverCalled]));
    for (const name of taken) {
      if (neverCalled.includes(name) || REBUILT.includes(name)) expect(typeof forLambda[name], name).toBe('function');
      else expect(forLambda[name], name).toBe(full[name]);
    }
  });

  // The Lambda set-up (xray-lambda-setup.cjs) repeats the package's without its sampling client:
  // each runs in a fresh process as Lambda starts one, then goes through three invocations' trace
  // headers (sampled, a new unsampled one, none); what each leaves behind must be the same.
  it("sets Lambda up as the package's own entry does: the same facade segment, invocation after invocation", async () => {
    const lib = path.join(PAYRELAY_PROJECT_ROOT, 'node_modules/aws-xray-sdk-core/dist/lib');
    const script = (entry: string) => `
      const sdk = require(${JSON.stringify(entry)});
      const contextUtils = require(${JSON.stringify(path.join(lib, 'context_utils'))});
      const segmentUtils = require(${JSON.stringify(path.join(lib, 'segments/segment_utils'))});
      const emitter = require(${JSON.stringify(path.join(lib, 'segment_emitter'))});
      const facade = () => {
        const s = sdk.getSegment();
        const { trace_id, id, notTraced, facade, in_progress, counter, name } = s;
        return { trace_id, id, notTraced, facade, in_progress, counter, name, closed: s.isClosed(), subsegments: (s.subsegments || []).length };
      };
      const seen = { start: facade() };
      const sub = sdk.getSegment().addNewSubsegment('call');
      seen.subsegment = { name: sub.name, underFacade: sub.parent === sdk.getSegment(), notTraced: sub.notTraced };
      seen.refused = sdk.getSegment().addAnnotation('k', 'v');
      seen.sameInvocation = facade();
      process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272794;Parent=53995c3f42cd8ad9;Sampled=0';
      seen.next = facade();
      delete process.env._X_AMZN_TRACE_ID;
      seen.none = facade();
      seen.methods = Object.keys(sdk.getSegment()).filter((k) => typeof sdk.getSegment()[k] === 'function').sort()
        .map((k) => k + ':' + sdk.getSegment()[k].name);
      seen.streamingThreshold = segmentUtils.getStreamingThreshold();
      seen.temporarySocket = emitter.useBatchingTemporarySocket;
      seen.manualMode = String(contextUtils.enableManualMode).includes('does not support');
      console.log(JSON.stringify(seen));`;
    const env = {
      PATH: process.env.PATH,
      LAMBDA_TASK_ROOT: PAYRELAY_PROJECT_ROOT,
      AWS_XRAY_LOG_LEVEL: 'silent',
      _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    };
    const setUp = async (entry: string) => JSON.parse((await run(process.execPath, ['-e', script(entry)], { env })).stdout) as Record<string, unknown>;
    const [packaged, ours] = await Promise.all([setUp('aws-xray-sdk-core'), setUp(path.join(PAYRELAY_PROJECT_ROOT, XRAY_SDK_FOR_LAMBDA))]);
    expect(ours).toEqual(packaged);
    expect(ours).toMatchObject({
      start: { trace_id: '1-5759e988-bd862e3fe1be46a994272793', id: '53995c3f42cd8ad8', facade: true, closed: true },
      subsegment: { name: 'call', underFacade: true },
      sameInvocation: { subsegments: 1 },
      next: { trace_id: '1-5759e988-bd862e3fe1be46a994272794', id: '53995c3f42cd8ad9', notTraced: true },
      none: { id: '00000000', notTraced: true },
      streamingThreshold: 0,
      temporarySocket: true,
      manualMode: true,
    });
  });

  // As Lambda starts a function: no trace header at load, one per invocation. The facade the set-up
  // makes carries no identity of its own at load (xray-lambda-setup.cjs, facadeSegment): each
  // invocation's subsegments must still carry that invocation's trace id and parent id, as the
  // package's do, and what the facade shows must be the same.
  it("gives the first invocation's subsegments the trace and parent ids of its header, as the package does", async () => {
    const script = (entry: string) => `
      const sdk = require(${JSON.stringify(entry)});
      const invocation = (header) => {
        process.env._X_AMZN_TRACE_ID = header;
        const facade = sdk.getSegment();
        const sub = facade.addNewSubsegment('## handler');
        const { trace_id, parent_id, type, name } = JSON.parse(sub.format());
        const seen = { subsegment: { trace_id, parent_id, type, name }, facade: { trace_id: facade.trace_id, id: facade.id } };
        facade.removeSubsegment(sub);
        return seen;
      };
      const seen = [
        invocation('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1'),
        invocation('Root=1-5759e988-bd862e3fe1be46a994272794;Parent=53995c3f42cd8ad9;Sampled=1'),
      ];
      console.log(JSON.stringify(seen));`;
    const env = { PATH: process.env.PATH, LAMBDA_TASK_ROOT: PAYRELAY_PROJECT_ROOT, AWS_XRAY_LOG_LEVEL: 'silent' };
    const invocations = async (entry: string) => JSON.parse((await run(process.execPath, ['-e', script(entry)], { env })).stdout) as unknown[];
    const [packaged, ours] = await Promise.all([invocations('aws-xray-sdk-core'), invocations(path.join(PAYRELAY_PROJECT_ROOT, XRAY_SDK_FOR_LAMBDA))]);
    expect(ours).toEqual(packaged);
    expect(ours).toEqual([
      {
        subsegment: { trace_id: '1-5759e988-bd862e3fe1be46a994272793', parent_id: '53995c3f42cd8ad8', type: 'subsegment', name: '## handler' },
        facade: { trace_id: '1-5759e988-bd862e3fe1be46a994272793', id: '53995c3f42cd8ad8' },
      },
      {
        subsegment: { trace_id: '1-5759e988-bd862e3fe1be46a994272794', parent_id: '53995c3f42cd8ad9', type: 'subsegment', name: '## handler' },
        facade: { trace_id: '1-5759e988-bd862e3fe1be46a994272794', id: '53995c3f42cd8ad9' },
      },
    ]);
  });

  // xray-aws-sdk-v3-for-lambda.cjs is the package's patcher on the capture rules of the services
  // payrelay's traced clients call: every payrelay call must record what the package records.
  it("records payrelay's DynamoDB, SQS and Secrets Manager calls as the package's own AWS SDK v3 patcher does", async () => {
    const packaged = await recorded(full.captureAWSv3Client as (client: unknown) => unknown);
    const ours = await recorded(forLambda.captureAWSv3Client as (client: unknown) => unknown);
    expect(ours).toEqual(packaged);
    const [subsegments, headers] = ours as [Array<Record<string, unknown>>, string[]];
    expect(subsegments).toHaveLength(CALLS.length);
    expect(headers).toEqual(CALLS.map(() => 'Root=1-id-id;Parent=id;Sampled=1'));
    // The rules are there: what the package captures for a DynamoDB query and an SQS batch, and the flags of a refusal and a throttle.
    expect(subsegments[4]).toMatchObject({ name: 'DynamoDB', namespace: 'aws', aws: { operation: 'Query', table_name: 'payouts', index_name: 'by-state', limit: 5, scan_index_forward: false } });
    expect(subsegments[8]).toMatchObject({ name: 'SQS', aws: { operation: 'SendMessageBatch', queue_url: expect.any(String), message_count: 2, failed_count: 1, successful_count: 1 } });
    expect(subsegments[2]).toMatchObject({ error: true, http: { response: { status: 400 } } });
    expect(subsegments[3]).toMatchObject({ throttle: true, error: true });
    expect(subsegments[6]).toMatchObject({ fault: true });
    expect(subsegments[14]).toMatchObject({ name: 'SecretsManager', aws: { operation: 'GetSecretValue', request_id: 'request-15' } });
  });

  it("carries the package's capture rules for exactly the services payrelay's traced clients call", () => {
    const packaged = load('aws-xray-sdk-core/dist/lib/resources/aws_whitelist.json') as { services: Record<string, unknown> };
    const ours = load(path.join(PAYRELAY_PROJECT_ROOT, 'infra/bundling/xray-aws-whitelist-for-lambda.json')) as { services: Record<string, unknown> };
    // The clients runtime code captures (`captured(...)` anywhere in shared/ and functions/), as the patcher names them.
    const runtime = ['shared', 'functions'].flatMap((dir) =>
      (readdirSync(path.join(PAYRELAY_PROJECT_ROOT, dir), { recursive: true }) as string[])
        .filter((file) => file.endsWith('.ts'))
        .map((file) => readFileSync(path.join(PAYRELAY_PROJECT_ROOT, dir, file), 'utf8')),
    );
    const captures = runtime.flatMap((code) => [...code.matchAll(/\bcaptured\((.*)\)/g)].map(([, argument]) => argument ?? ''));
    // The services, each once (the DynamoDB module captures two clients: the shared one and the payout item writer).
    const traced = [...new Set(captures.map((argument) => /^new (\w+)Client\(/.exec(argument)?.[1]?.toLowerCase() ?? argument))];
    expect(traced.sort()).toEqual(['dynamodb', 'secretsmanager', 'sqs']);
    expect(ours.services).toEqual(Object.fromEntries(traced.filter((service) => service in packaged.services).map((service) => [service, packaged.services[service]])));
  });

  it("bundles without the AWS SDK v2 patcher, semver, the plugins, the global HTTP and promise patchers, the middleware with its sampling client, cls-hooked and the package's whole capture rules", async () => {
    // As PayrelayFunction bundles it: from the project root, with the construct's aliases.
    const { metafile } = await build({
      entryPoints: [path.join(PAYRELAY_PROJECT_ROOT, XRAY_SDK_FOR_LAMBDA)],
      absWorkingDir: PAYRELAY_PROJECT_ROOT,
      alias: { ...BUNDLE_ALIASES },
      bundle: true,
      platform: 'node',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/infra\/bundling\/xray-aws-sdk-v3-for-lambda\.cjs$/),
        expect.stringMatching(/infra\/bundling\/cls-context-for-lambda\.ts$/),
      ]),
    );
    const leftOut =
      /\/semver\/|patchers\/(aws_p|aws3_p|http_p|promise_p|call_capturer)\.js$|attributes\/aws\.js$|aws_whitelist\.json$|segments\/plugins\/|\/middleware\/|\/(cls-hooked|emitter-listener|shimmer)\//;
    expect(inputs.filter((file) => leftOut.test(file))).toEqual([]);
  });
});
