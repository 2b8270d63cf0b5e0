import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KycServiceClient } from '@shared/providers/kyc-client';
import { startRecordingServer, type RecordedRequest, type RecordingServer, type Reply } from '@test/support/http-test-servers';

let reply: (request: RecordedRequest) => Reply = () => ({ status: 200, body: {} });
let server: RecordingServer;
let client: KycServiceClient;

beforeAll(async () => {
  server = await startRecordingServer((request) => reply(request));
  client = new KycServiceClient({ baseUrl: server.url, timeoutMs: 2000 });
});
afterEach(() => {
  server.requests.length = 0;
});
afterAll(async () => {
  client.close();
  await server.close();
});

const expectRequest = (method: string, url: string, body?: unknown) => {
  const request = server.last();
  expect(request.method).toBe(method);
  expect(request.url).toBe(url);
  expect(request.headers['content-type']).toBe('application/json');
  expect(request.body).toEqual(body);
};

describe('KycServiceClient request shapes (as documented)', () => {
  it('registers an app', async () => {
    const app = { _id: 'app-1', name: 'Acme', verified: false, status: 'Active', __v: 0 };
    reply = () => ({ status: 200, body: { message: 'registered', value: '123456', app } });
    const answer = await client.registerApp({ name: 'Acme', email: 'kyc@acme.test', origin: ['acme.test'] });
    expect(answer).toEqual({ message: 'registered', value: '123456', app });
    expectRequest('POST', '/api/v1/app/register', { name: 'Acme', email: 'kyc@acme.test', origin: ['acme.test'] });
  });

  it('verifies an app, and a wrong code is Rejected', async () => {
    reply = () => ({ status: 200, body: { message: 'verified', data: { _id: 'app-1', email: 'kyc@acme.test' } } });
    expect((await client.verifyApp({ email: 'kyc@acme.test', code: '123456' })).data).toEqual({ _id: 'app-1', email: 'kyc@acme.test' });
    expectRequest('POST', '/api/v1/app/verify', { email: 'kyc@acme.test', code: '123456' });
    reply = () => ({ status: 400, body: { error: true, message: 'invalid code', data: null } });
    await expect(client.verifyApp({ email: 'kyc@acme.test', code: '000000' })).rejects.toMatchObject({
      name: 'ProviderRejectedError',
      httpStatus: 400,
      providerMessage: 'invalid code',
    });
  });

  it('requests a token', async () => {
    reply = () => ({ status: 200, body: { message: 'sent', value: '654321' } });
    expect(await client.requestToken({ email: 'kyc@acme.test' })).toEqual({ message: 'sent', value: '654321' });
    expectRequest('POST', '/api/v1/request', { email: 'kyc@acme.test' });
  });

  it('lists KYC types', async () => {
    const types = [
      { _id: 't1', flow_id: 'f1', name: 'Individual', __v: 0 },
      { _id: 't2', flow_id: 'f2', name: 'Business', __v: 0 },
    ];
    reply = () => ({ status: 200, body: types });
    expect(await client.getKycTypes()).toEqual(types);
    expectRequest('GET', '/api/v1/kyc_type/');
  });

  it('creates an individual order', async () => {
    const input = {
      full_name: 'Ama Owusu',
      email: 'ama@example.test',
      phone: '+233200000000',
      app: 'app-1',
      kyc_type: 't1',
      callback: 'https://hooks.example.test/kyc/tok',
      redirect: 'https://acme.test/done',
      reference: 'user-9',
    };
    const order = { _id: 'o1', verification_url: 'https://kyc.test/v/o1', scan_ref: 's1', reference: 'user-9', kyc_type: { _id: 't1' } };
    reply = () => ({ status: 200, body: order });
    expect(await client.createIndividualOrder(input)).toEqual(order);
    expectRequest('POST', '/api/v1/order/', input);
  });

  it('creates a business order', async () => {
    const input = {
      business_name: 'Acme Ltd',
      country: 'GHA',
      business_email: 'biz@acme.test',
      app: 'app-1',
      kyc_type: 't2',
      callback: 'https://hooks.example.test/kyc/tok',
      redirect: 'https://acme.test/done',
      reference: 'biz-1',
      custom_files: ['certificate'],
      state_of_jurisdiction: 'GHA',
    };
    const order = { _id: 'o2', business_name: 'Acme Ltd', order: { _id: 'x', status: 'Unprocessed', progress: [], error: [] } };
    reply = () => ({ status: 200, body: order });
    expect(await client.createBusinessOrder(input)).toEqual(order);
    expectRequest('POST', '/api/v1/business/order', input);
  });

  it('gets the responses of one app (app_id in the query), answer as sent', async () => {
    reply = () => ({ status: 200, body: [{ event: 'applicantCreated' }] });
    expect(await client.getResponses({ app_id: 'app 1' })).toEqual([{ event: 'applicantCreated' }]);
    expectRequest('GET', '/api/v1/responses?app_id=app+1');
    expect(server.last().query).toEqual({ app_id: 'app 1' });
  });

  it('gets the verification status in query form and normalizes the word', async () => {
    reply = () => ({ status: 200, body: { status: 'approved', reference: 'user-9', order: { status: 'completed' } } });
    const answer = await client.getVerificationStatus({ app_id: 'app 1', user_reference: 'user/9' });
    expect(answer).toMatchObject({ status: 'approved', decision: 'approved', phase: undefined, processed: true });
    expect(answer.record.order).toEqual({ status: 'completed' });
    const request = server.last();
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/api/v1/order/verification-status');
    expect(request.query).toEqual({ app_id: 'app 1', user_reference: 'user/9' });
  });

  it('reads the documented 400 { status: UNPROCESSED } as not processed yet', async () => {
    reply = () => ({ status: 400, body: { status: 'UNPROCESSED' } });
    const answer = await client.getVerificationStatus({ app_id: 'app-1', user_reference: 'user-9' });
    expect(answer).toMatchObject({ status: 'UNPROCESSED', processed: false, phase: undefined, decision: undefined });
    reply = () => ({ status: 400, body: { message: 'bad app' } });
    await expect(client.getVerificationStatus({ app_id: 'x', user_reference: 'y' })).rejects.toMatchObject({ kind: 'rejected' });
  });

  it('gets the user status in path form, escaping path parts', async () => {
    reply = () => ({ status: 200, body: { status: 'init' } });
    const answer = await client.getUserStatus({ app_id: 'app-1', reference: 'user/9' });
    expect(answer).toMatchObject({ status: 'init', phase: 'initiated', processed: true });
    expectRequest('GET', '/api/v1/order/app/app-1/user_reference/user%2F9/status');
  });

  it('treats a 2xx without the fields it needs as ambiguous', async () => {
    reply = () => ({ status: 200, body: { message: 'registered' } });
    await expect(client.registerApp({ name: 'a', email: 'b', origin: [] })).rejects.toMatchObject({
      kind: 'ambiguous',
      message: expect.stringContaining('value, app'),
    });
  });
});
