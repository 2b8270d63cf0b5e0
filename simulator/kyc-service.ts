import type { FaultBook } from './faults';
import { kycRefusal, type Reply } from './refusals';
import { requireStrings } from './request-body';
import type { SimLogger } from './logger';
import type { Outbox } from './outbox';
import type { Delivery, Outgoing } from './outgoing';
import { randomDigits, randomHex, type Random } from './prng';

export type KycDecisionWord = 'approved' | 'rejected';

/** How the end user's journey is played: by itself with a delay between callbacks, or by admin calls. */
export interface KycOptions {
  mode?: 'auto' | 'manual';
  /** Delay before each callback in auto mode (default 50 ms). */
  stepDelayMs?: number;
  /** Decision of auto-played journeys (default approved). */
  decision?: KycDecisionWord;
  /** User references whose auto-played journeys end rejected. */
  rejectReferences?: string[];
}

/** The documented paths, relative to the KYC base URL. */
export const KYC_PATHS = {
  register: '/api/v1/app/register',
  verify: '/api/v1/app/verify',
  requestToken: '/api/v1/request',
  kycTypes: '/api/v1/kyc_type',
  individualOrder: '/api/v1/order',
  businessOrder: '/api/v1/business/order',
  responses: '/api/v1/responses',
  verificationStatus: '/api/v1/order/verification-status',
} as const;

interface KycType {
  _id: string;
  flow_id: string;
  name: 'Individual' | 'Business';
  created_at: string;
  updated_at: string;
  __v: number;
}

const TYPE_TIME = '2024-01-01T00:00:00.000Z';
/** Fixed identifiers, so docs and tests can name them. */
export const KYC_TYPES: readonly KycType[] = [
  { _id: '65a0c0ffee00000000000001', flow_id: 'flow-individual-1', name: 'Individual', created_at: TYPE_TIME, updated_at: TYPE_TIME, __v: 0 },
  { _id: '65a0c0ffee00000000000002', flow_id: 'flow-business-1', name: 'Business', created_at: TYPE_TIME, updated_at: TYPE_TIME, __v: 0 },
];

interface App {
  _id: string;
  name: string;
  email: string;
  origin: string[];
  verified: boolean;
  status: 'Active' | 'Inactive';
  created_at: string;
  updated_at: string;
  __v: number;
  token: string;
}

interface KycOrder {
  _id: string;
  kind: 'individual' | 'business';
  app: string;
  kyc_type: KycType;
  scan_ref: string;
  verification_url: string;
  callback: string;
  reference: string;
  redirect: string;
  created_at: string;
  updated_at: string;
  /** The request body as sent (personal or business data). */
  input: Record<string, unknown>;
  account: string;
  kyc_token: string;
  /** Number of journey steps played (0..5). */
  step: number;
  decision: KycDecisionWord;
  /** A callback held back by the out-of-order fault; it is posted after the next one. */
  held?: KycCallbackPayload;
}

/** The documented callback payload. */
export interface KycCallbackPayload {
  status: string;
  event: string;
  order: string;
  timestamp: string;
  kyc_token: string;
  account: string;
  user_reference: string;
  meta_data: { kyc_note: string; kyc_status: string };
  first_name: string;
  last_name: string;
  phone: string;
  email: string;
  country: string;
}

interface Step {
  event: string;
  status: string;
  note: (decision: KycDecisionWord) => string;
  reviewed: boolean;
  userData: boolean;
}

// The documented sequence ("Callback status and event pairs" in the KYC service's documentation).
const STEPS: readonly Step[] = [
  { event: 'applicantCreated', status: 'init', note: () => 'User created, KYC initiated', reviewed: false, userData: false },
  { event: 'applicantPersonalInfoChanged', status: 'init', note: () => 'User created, KYC initiated', reviewed: false, userData: false },
  { event: 'applicantPending', status: 'pending', note: () => 'User uploaded required documents', reviewed: false, userData: false },
  {
    event: 'applicantReviewed',
    status: 'completed',
    note: (d) => (d === 'approved' ? 'Verification complete' : 'Verification rejected'),
    reviewed: true,
    userData: false,
  },
  {
    event: 'applicantReviewed',
    status: 'completed',
    note: (d) => (d === 'approved' ? 'Verification complete, user data returned' : 'Verification rejected, user data returned'),
    reviewed: true,
    userData: true,
  },
];

/** Admin request: which order, and what the end user does next. */
export interface KycAdvanceRequest {
  order_id?: string;
  app_id?: string;
  reference?: string;
  /** `next` plays one callback (default), `finish` plays the rest, `change-decision` re-reviews a finished journey. */
  action?: 'next' | 'finish' | 'change-decision';
  /** Decision for `finish` and `change-decision` (and `next` when it reaches the review). */
  decision?: KycDecisionWord;
}

const refuse = kycRefusal;

/** The simulated identity-verification service. */
export class KycService {
  private readonly apps = new Map<string, App>();
  private readonly orders = new Map<string, KycOrder>();
  private readonly posted: Array<{ app: string; payload: KycCallbackPayload }> = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly options: Required<Omit<KycOptions, 'rejectReferences'>> & { rejectReferences: string[] },
    private readonly deps: {
      random: Random;
      faults: FaultBook;
      outbox: Outbox;
      outgoing: Outgoing;
      log: SimLogger;
      kycBaseUrl: () => string;
    },
  ) {}

  private id(): string {
    return randomHex(this.deps.random, 24);
  }

  private newToken(app: App): string {
    app.token = randomDigits(this.deps.random, 6);
    this.deps.outbox.add({ to: app.email, kind: 'kyc-verification-token', token: app.token });
    this.deps.log.info('kyc: verification token written to the outbox', { to: app.email });
    return app.token;
  }

  private publicApp(app: App): Omit<App, 'token'> {
    const { token: _token, ...visible } = app;
    return visible;
  }

  register(body: Record<string, unknown>): Reply {
    const { name, email } = requireStrings(body, ['name', 'email'], refuse);
    const origin = body.origin ?? [];
    if (!Array.isArray(origin) || origin.some((o) => typeof o !== 'string')) {
      throw refuse(400, 'origin must be an array of strings');
    }
    if ([...this.apps.values()].some((a) => a.email === email)) {
      throw refuse(400, 'an app is already registered with this email; use /api/v1/request for a new token');
    }
    const now = new Date().toISOString();
    const app: App = {
      _id: this.id(),
      name,
      email,
      origin: origin as string[],
      verified: false,
      status: 'Active',
      created_at: now,
      updated_at: now,
      __v: 0,
      token: '',
    };
    this.apps.set(app._id, app);
    const value = this.newToken(app);
    return { status: 200, body: { message: 'App registered; a verification token was sent to your email', value, app: this.publicApp(app) } };
  }

  verify(body: Record<string, unknown>): Reply {
    const { email, code } = requireStrings(body, ['email', 'code'], refuse);
    const app = [...this.apps.values()].find((a) => a.email === email);
    if (!app || app.token === '' || app.token !== code) throw refuse(400, 'invalid email or verification code');
    app.verified = true;
    app.token = '';
    app.updated_at = new Date().toISOString();
    app.__v += 1;
    const { _id, email: appEmail, name, origin, created_at, updated_at, __v } = app;
    return { status: 200, body: { message: 'App verified', data: { _id, email: appEmail, name, origin, created_at, updated_at, __v } } };
  }

  requestToken(body: Record<string, unknown>): Reply {
    const { email } = requireStrings(body, ['email'], refuse);
    const app = [...this.apps.values()].find((a) => a.email === email);
    if (!app) throw refuse(400, 'no app registered with this email');
    return { status: 200, body: { message: 'A verification token was sent to your email', value: this.newToken(app) } };
  }

  kycTypes(): Reply {
    return { status: 200, body: structuredClone(KYC_TYPES) };
  }

  private checkApp(appId: string): App {
    const app = this.apps.get(appId);
    if (!app) throw refuse(400, 'unknown app');
    if (!app.verified) throw refuse(400, 'app is not verified; verify it with the e-mailed token first');
    return app;
  }

  private createOrder(kind: KycOrder['kind'], body: Record<string, unknown>, fields: Record<string, string>): KycOrder {
    this.checkApp(fields.app as string);
    const type = KYC_TYPES.find((t) => t._id === fields.kyc_type);
    const expected = kind === 'individual' ? 'Individual' : 'Business';
    if (!type || type.name !== expected) throw refuse(400, `kyc_type must be the ${expected} KYC type _id (GET /api/v1/kyc_type)`);
    try {
      new URL(fields.callback as string);
    } catch {
      throw refuse(400, 'callback must be an absolute URL');
    }
    const now = new Date().toISOString();
    const _id = this.id();
    const reference = fields.reference as string;
    const order: KycOrder = {
      _id,
      kind,
      app: fields.app as string,
      kyc_type: type,
      scan_ref: `SCAN-${randomHex(this.deps.random, 12).toUpperCase()}`,
      verification_url: `${this.deps.kycBaseUrl()}/journey/${_id}`,
      callback: fields.callback as string,
      reference,
      redirect: typeof body.redirect === 'string' ? body.redirect : '',
      created_at: now,
      updated_at: now,
      input: { ...body },
      account: `acct-${randomHex(this.deps.random, 16)}`,
      kyc_token: '',
      step: 0,
      decision: this.options.rejectReferences.includes(reference) ? 'rejected' : this.options.decision,
    };
    this.orders.set(_id, order);
    this.deps.log.info('kyc: order created', { kind, order: _id, userReference: reference });
    if (this.options.mode === 'auto') this.scheduleAuto(order);
    return order;
  }

  private orderCore(order: KycOrder): Record<string, unknown> {
    const { _id, name, created_at, updated_at, __v } = order.kyc_type;
    return {
      _id: order._id,
      app: order.app,
      kyc_type: { _id, name, created_at, updated_at, __v },
      verification_url: order.verification_url,
      callback: order.callback,
      reference: order.reference,
      redirect: order.redirect,
      created_at: order.created_at,
      updated_at: order.updated_at,
      __v: 0,
    };
  }

  individualOrder(body: Record<string, unknown>): Reply {
    const fields = requireStrings(body, ['app', 'kyc_type', 'callback', 'reference'], refuse);
    const order = this.createOrder('individual', body, fields);
    return { status: 200, body: { ...this.orderCore(order), scan_ref: order.scan_ref } };
  }

  businessOrder(body: Record<string, unknown>): Reply {
    const fields = requireStrings(body, ['business_name', 'app', 'kyc_type', 'callback', 'reference'], refuse);
    const order = this.createOrder('business', body, fields);
    return {
      status: 200,
      body: {
        ...this.orderCore(order),
        business_name: fields.business_name,
        country: typeof body.country === 'string' ? body.country : '',
        business_email: typeof body.business_email === 'string' ? body.business_email : '',
        custom_files: Array.isArray(body.custom_files) ? body.custom_files : [],
        order: this.innerOrder(order),
      },
    };
  }

  private innerOrder(order: KycOrder): Record<string, unknown> {
    const status = order.step === 0 ? 'Unprocessed' : order.step < STEPS.length ? 'processing' : 'completed';
    return {
      _id: `${order._id}-o`,
      progress: STEPS.slice(0, order.step).map((s) => s.event),
      error: [],
      status,
      kyc_token: order.kyc_token,
      created_at: order.created_at,
      updated_at: order.updated_at,
      __v: order.step,
    };
  }

  /** GET /responses: the callbacks posted so far, oldest first, optionally for one app_id. */
  responses(query: URLSearchParams): Reply {
    const app = query.get('app_id');
    return { status: 200, body: this.posted.filter((p) => !app || p.app === app).map((p) => structuredClone(p.payload)) };
  }

  private latestOrder(appId: string, reference: string): KycOrder | undefined {
    let latest: KycOrder | undefined;
    for (const order of this.orders.values()) {
      if (order.app === appId && order.reference === reference) latest = order;
    }
    return latest;
  }

  /** The status word of a user: UNPROCESSED before the journey, init/pending during it, then the decision. */
  private statusWord(order: KycOrder | undefined): string {
    if (!order || order.step === 0) return 'UNPROCESSED';
    const last = STEPS[order.step - 1] as Step;
    return last.reviewed ? order.decision : last.status;
  }

  verificationStatus(query: URLSearchParams): Reply {
    const appId = query.get('app_id') ?? '';
    const reference = query.get('user_reference') ?? '';
    const order = appId && reference ? this.latestOrder(appId, reference) : undefined;
    if (!order || order.step === 0) return { status: 400, body: { status: 'UNPROCESSED' } };
    const person = this.person(order);
    const input = order.input;
    const str = (key: string): string => (typeof input[key] === 'string' ? (input[key] as string) : '');
    const reviewed = (STEPS[order.step - 1] as Step).reviewed;
    return {
      status: 200,
      body: {
        status: this.statusWord(order),
        kyc_status: reviewed ? order.decision : 'awaiting_approval',
        user_facial_images: { image_1: `${order.verification_url}/image/1`, image_2: `${order.verification_url}/image/2` },
        _id: order._id,
        email: person.email,
        full_name: `${person.first_name} ${person.last_name}`.trim(),
        phone: person.phone,
        app: order.app,
        scan_ref: order.scan_ref,
        verification_url: order.verification_url,
        callback: order.callback,
        reference: order.reference,
        redirect: order.redirect,
        kyc_type: order.kyc_type._id,
        address: str('address'),
        bvn: '',
        country: person.country,
        govt_id_no: '',
        govt_id_photo: '',
        proof_of_address: '',
        bank_statement: '',
        user_indemnity: '',
        guarantors_form: '',
        id_of_guarantor: '',
        guarantors_proof_of_address: '',
        created_at: order.created_at,
        updated_at: order.updated_at,
        __v: order.step,
        order: this.innerOrder(order),
      },
    };
  }

  userStatus(appId: string, reference: string): Reply {
    return { status: 200, body: { status: this.statusWord(this.latestOrder(appId, reference)) } };
  }

  /** The verification_url: a small page standing in for the end user's journey. */
  journeyPage(orderId: string): Reply {
    const order = this.orders.get(orderId);
    if (!order) throw refuse(404, 'no such KYC order');
    return {
      status: 200,
      body: {
        message: 'Simulated KYC journey. Play it with POST /__admin/kyc/advance {"order_id": "..."} or in auto mode.',
        order_id: order._id,
        reference: order.reference,
        steps_played: order.step,
        status: this.statusWord(order),
      },
    };
  }

  // ---------- the journey ----------

  private person(order: KycOrder): Pick<KycCallbackPayload, 'first_name' | 'last_name' | 'phone' | 'email' | 'country'> {
    const input = order.input;
    const str = (key: string): string => (typeof input[key] === 'string' ? (input[key] as string) : '');
    if (order.kind === 'business') {
      return { first_name: str('business_name'), last_name: '', phone: str('phone'), email: str('business_email'), country: str('country') || 'GHA' };
    }
    const [first = '', ...rest] = str('full_name').split(/\s+/).filter(Boolean);
    return { first_name: first, last_name: rest.join(' '), phone: str('phone'), email: str('email'), country: str('country') || 'GHA' };
  }

  private payload(order: KycOrder, step: Step, decision: KycDecisionWord): KycCallbackPayload {
    const empty = { first_name: '', last_name: '', phone: '', email: '', country: '' };
    return {
      status: step.status,
      event: step.event,
      order: order._id,
      timestamp: new Date().toISOString(),
      kyc_token: order.kyc_token,
      account: order.account,
      user_reference: order.reference,
      meta_data: { kyc_note: step.note(decision), kyc_status: step.reviewed ? decision : 'awaiting_approval' },
      ...(step.userData ? this.person(order) : empty),
    };
  }

  /** Plays one step and returns the callbacks to post now (the out-of-order fault may hold one back). */
  private playStep(order: KycOrder): KycCallbackPayload[] {
    const step = STEPS[order.step] as Step;
    const payload = this.payload(order, step, order.decision);
    order.step += 1;
    order.updated_at = payload.timestamp;
    if (order.held) {
      const held = order.held;
      order.held = undefined;
      return [payload, held];
    }
    const faults = this.deps.faults;
    if (order.step < STEPS.length && faults.roll('kycCallback', 'outOfOrder', faults.get('kycCallback').outOfOrderRate)) {
      order.held = payload;
      return [];
    }
    return [payload];
  }

  private async deliver(order: KycOrder, payloads: KycCallbackPayload[]): Promise<Delivery[]> {
    for (const payload of payloads) this.posted.push({ app: order.app, payload });
    if (payloads.length === 0) return [];
    return this.deps.outgoing.send('kycCallback', order.callback, payloads);
  }

  private findOrder(request: KycAdvanceRequest): KycOrder {
    const order = request.order_id
      ? this.orders.get(request.order_id)
      : request.app_id && request.reference
        ? this.latestOrder(request.app_id, request.reference)
        : undefined;
    if (!order) throw refuse(404, 'no KYC order: give order_id, or app_id and reference of an existing order');
    return order;
  }

  /** Admin: plays the end user's next step, the rest of the journey, or a later change of decision. */
  async advance(request: KycAdvanceRequest): Promise<Delivery[]> {
    const order = this.findOrder(request);
    const action = request.action ?? 'next';
    if (request.decision !== undefined && request.decision !== 'approved' && request.decision !== 'rejected') {
      throw refuse(400, 'decision must be approved or rejected');
    }
    if (action === 'change-decision') {
      if (order.step < STEPS.length) throw refuse(409, 'the journey is not finished; finish it before changing the decision');
      const decision = request.decision ?? (order.decision === 'approved' ? 'rejected' : 'approved');
      order.decision = decision;
      order.updated_at = new Date().toISOString();
      return this.deliver(order, [this.payload(order, STEPS[STEPS.length - 1] as Step, decision)]);
    }
    if (action !== 'next' && action !== 'finish') throw refuse(400, 'action must be next, finish or change-decision');
    if (order.step >= STEPS.length) throw refuse(409, 'the journey is already finished');
    if (request.decision) order.decision = request.decision;
    const payloads: KycCallbackPayload[] = [];
    do payloads.push(...this.playStep(order));
    while (action === 'finish' && order.step < STEPS.length);
    return this.deliver(order, payloads);
  }

  private scheduleAuto(order: KycOrder): void {
    const tick = (): void => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (order.step >= STEPS.length) return;
        void this.deliver(order, this.playStep(order)).then(() => {
          if (order.step < STEPS.length) tick();
        });
      }, this.options.stepDelayMs);
      this.timers.add(timer);
    };
    tick();
  }

  /** Forgets apps, orders and posted callbacks. */
  reset(): void {
    this.stop();
    this.apps.clear();
    this.orders.clear();
    this.posted.length = 0;
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
