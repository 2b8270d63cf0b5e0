import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { adminRoute, type SimulatorAdmin } from './admin';
import type { FaultBook, FaultOperation, RawAnswer } from './faults';
import { kycRefusal, payoutRefusal, SimHttpError, type Reply } from './refusals';
import { parseJsonObject, readBody } from './request-body';
import { sleep } from './sleep';
import { KYC_PATHS, type KycService } from './kyc-service';
import type { SimLogger } from './logger';
import { PAYOUT_PATHS, type PayoutService } from './payout-service';

/** Where the KYC service lives on the shared port, so its paths never collide with the payout service's. */
export const KYC_PREFIX = '/kyc';

interface RouteContext {
  headers: IncomingHttpHeaders;
  query: URLSearchParams;
  body: Record<string, unknown>;
  params: string[];
}

interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  /** The fault operation of the route; routes without one take no faults. */
  operation?: FaultOperation;
  kyc: boolean;
  /** Sees every request of the route before any fault (the Payout request log). */
  observe?(ctx: RouteContext): void;
  run(ctx: RouteContext): Reply | Promise<Reply>;
}

const exact = (path: string): RegExp => new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

/** The route table of both services. */
export function buildRoutes(payout: PayoutService, kyc: KycService, collectionOrderPath: string): Route[] {
  const k = (path: string): RegExp => exact(KYC_PREFIX + path);
  return [
    { method: 'POST', pattern: exact(PAYOUT_PATHS.onboardPartner), operation: 'onboardPartner', kyc: false, run: (c) => payout.onboardPartner(c.body) },
    { method: 'POST', pattern: exact(PAYOUT_PATHS.resetPartnerKeys), operation: 'resetPartnerKeys', kyc: false, run: (c) => payout.resetPartnerKeys(c.body) },
    { method: 'POST', pattern: exact(PAYOUT_PATHS.genKeysForPartner), operation: 'resetPartnerKeys', kyc: false, run: (c) => payout.resetPartnerKeys(c.body) },
    {
      method: 'POST',
      pattern: exact(PAYOUT_PATHS.accountVerification),
      operation: 'accountVerification',
      kyc: false,
      run: (c) => payout.accountVerification(c.headers, c.body),
    },
    {
      method: 'POST',
      pattern: exact(PAYOUT_PATHS.payout),
      operation: 'payout',
      kyc: false,
      observe: (c) => payout.recordCall(c.body),
      run: (c) => payout.payout(c.headers, c.body),
    },
    { method: 'GET', pattern: exact(PAYOUT_PATHS.getPayout), operation: 'getPayout', kyc: false, run: (c) => payout.getPayout(c.headers, c.query) },
    { method: 'POST', pattern: exact(collectionOrderPath), operation: 'collectionOrder', kyc: false, run: (c) => payout.collectionOrder(c.headers, c.body) },
    { method: 'GET', pattern: /^\/one-time\/([0-9a-f]+)$/, kyc: false, run: (c) => payout.readOneTimeLink(c.params[0] as string) },
    { method: 'POST', pattern: k(KYC_PATHS.register), operation: 'kycRegister', kyc: true, run: (c) => kyc.register(c.body) },
    { method: 'POST', pattern: k(KYC_PATHS.verify), operation: 'kycVerify', kyc: true, run: (c) => kyc.verify(c.body) },
    { method: 'POST', pattern: k(KYC_PATHS.requestToken), operation: 'kycRequestToken', kyc: true, run: (c) => kyc.requestToken(c.body) },
    { method: 'GET', pattern: k(KYC_PATHS.kycTypes), operation: 'kycTypes', kyc: true, run: () => kyc.kycTypes() },
    { method: 'POST', pattern: k(KYC_PATHS.individualOrder), operation: 'kycIndividualOrder', kyc: true, run: (c) => kyc.individualOrder(c.body) },
    { method: 'POST', pattern: k(KYC_PATHS.businessOrder), operation: 'kycBusinessOrder', kyc: true, run: (c) => kyc.businessOrder(c.body) },
    { method: 'GET', pattern: k(KYC_PATHS.responses), operation: 'kycResponses', kyc: true, run: (c) => kyc.responses(c.query) },
    {
      method: 'GET',
      pattern: k(KYC_PATHS.verificationStatus),
      operation: 'kycVerificationStatus',
      kyc: true,
      run: (c) => kyc.verificationStatus(c.query),
    },
    {
      method: 'GET',
      pattern: new RegExp(`^${KYC_PREFIX}/api/v1/order/app/([^/]+)/user_reference/([^/]+)/status$`),
      operation: 'kycUserStatus',
      kyc: true,
      run: (c) => kyc.userStatus(c.params[0] as string, c.params[1] as string),
    },
    { method: 'GET', pattern: new RegExp(`^${KYC_PREFIX}/journey/([0-9a-f]+)$`), kyc: true, run: (c) => kyc.journeyPage(c.params[0] as string) },
  ];
}

/** A Reply that sends an injected raw answer. */
function rawReply(answer: RawAnswer): Reply {
  const headers: Record<string, string> = { 'content-type': answer.contentType ?? 'application/json' };
  if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
  return { status: answer.status, body: undefined, raw: answer.body, headers };
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Request handling: routing, injected faults, error mapping and held (timed-out) responses. */
export function createRequestHandler(deps: {
  routes: Route[];
  admin: SimulatorAdmin;
  faults: FaultBook;
  log: SimLogger;
  held: Set<ServerResponse>;
}): (req: IncomingMessage, res: ServerResponse) => void {
  const { routes, admin, faults, log, held } = deps;

  const send = (res: ServerResponse, reply: Reply): void => {
    const text = reply.raw ?? JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    // The provider's documentation writes some paths with a trailing slash and some without; accept both.
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const method = req.method ?? 'GET';
    const isKyc = path.startsWith(KYC_PREFIX + '/');
    const refuse = isKyc ? kycRefusal : payoutRefusal;
    let reply: Reply;
    let operation: FaultOperation | undefined;
    try {
      const text = await readBody(req);
      if (path === '/__admin' || path.startsWith('/__admin/')) {
        if (!LOOPBACK.has(req.socket.remoteAddress ?? '')) throw payoutRefusal(403, 'the admin API answers loopback callers only');
        reply = await adminRoute(admin, method, path, url.searchParams, parseJsonObject(text, payoutRefusal));
      } else {
        let params: string[] = [];
        const route = routes.find((r) => {
          const match = r.pattern.exec(path);
          if (match) params = match.slice(1);
          return match !== null;
        });
        if (!route) throw refuse(404, `no such endpoint: ${method} ${path}`);
        if (route.method !== method) throw refuse(405, `${path} accepts ${route.method} only`);
        try {
          params = params.map(decodeURIComponent);
        } catch {
          throw refuse(400, 'the path has an invalid %-escape');
        }
        operation = route.operation;
        const body = method === 'POST' ? parseJsonObject(text, refuse) : {};
        route.observe?.({ headers: req.headers, query: url.searchParams, body, params });
        if (operation) {
          const latency = faults.latency(operation);
          if (latency > 0) await sleep(latency);
          const settings = faults.get(operation);
          if (faults.roll(operation, 'error', settings.errorRate)) {
            const status = settings.errorStatus ?? 503;
            const message = status === 429 ? 'too many requests (injected fault)' : 'service temporarily unavailable (injected fault)';
            const headers = settings.retryAfter === undefined ? undefined : { 'retry-after': settings.retryAfter };
            const replyNow: Reply = { status, body: { success: false, message }, ...(headers ? { headers } : {}) };
            log.info('request refused', { method, path, status, reason: 'injected fault' });
            send(res, replyNow);
            return;
          }
          if (faults.roll(operation, 'refusal', settings.refusalRate)) {
            send(res, rawReply(faults.refusal(operation)));
            return;
          }
        }
        reply = await route.run({ headers: req.headers, query: url.searchParams, body, params });
        if (operation && reply.status < 300 && faults.roll(operation, 'refusalAfterCommit', faults.get(operation).refusalAfterCommitRate)) {
          // Committed (the route ran), then refused in the provider's own words.
          reply = rawReply(faults.refusal(operation));
        }
      }
    } catch (error) {
      if (error instanceof SimHttpError) {
        reply = { status: error.status, body: error.body };
        log.info('request refused', { method, path, status: error.status, reason: error.message });
      } else {
        log.warn('simulator bug while handling a request', { method, path, error: error instanceof Error ? error.message : String(error) });
        reply = { status: 500, body: { success: false, message: 'simulator internal error' } };
      }
    }
    log.debug('request', { method, path, status: reply.status });
    if (operation && reply.status < 300) {
      const settings = faults.get(operation);
      if (faults.roll(operation, 'timeout', settings.timeoutRate)) {
        // Committed, never answered: the client gives up on its own; stop() destroys the socket.
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      if (faults.roll(operation, 'reset', settings.resetRate)) {
        req.socket.destroy();
        return;
      }
    }
    send(res, reply);
  };

  return (req, res) => {
    void handle(req, res);
  };
}
