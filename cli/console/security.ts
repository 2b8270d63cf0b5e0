import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

/** The cookie that carries the per-start token after the first load. */
export const SESSION_COOKIE = 'payrelay_console';

/** The form field every POST must carry. */
export const CSRF_FIELD = 'csrf';

/**
 * The two random values of one console start: the access token printed with the URL (it becomes an
 * HttpOnly cookie) and the CSRF token put into every form. Both die with the process.
 */
export interface ConsoleSecrets {
  readonly token: string;
  readonly csrf: string;
}

/** Fresh random secrets for one start of the console. */
export function newConsoleSecrets(): ConsoleSecrets {
  return { token: randomBytes(32).toString('base64url'), csrf: randomBytes(32).toString('base64url') };
}

/** Constant-time comparison, so a wrong guess tells nothing about how close it was. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A strict Content-Security-Policy: scripts, styles and images from the console itself only, no
 * inline script or style, no framing, forms post only to the console. Whatever a provider string
 * holds, the browser will not run it even if escaping ever failed.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Headers on every answer, the 401 and error pages included. */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  c.header('X-Content-Type-Options', 'nosniff');
  // same-origin (not no-referrer): with no-referrer the browser sends `Origin: null` on the console's own forms.
  c.header('Referrer-Policy', 'same-origin');
  c.header('Cache-Control', 'no-store');
  c.header('X-Frame-Options', 'DENY');
};

/**
 * Refuses a request whose Host header is not this console's loopback address: a DNS-rebinding page
 * (evil.example resolving to 127.0.0.1) reaches the port, but with its own name in Host.
 */
export function hostCheck(port: () => number): MiddlewareHandler {
  return async (c, next) => {
    const allowed = new Set([`127.0.0.1:${port()}`, `localhost:${port()}`]);
    const host = c.req.header('host') ?? '';
    if (!allowed.has(host.toLowerCase())) {
      return c.text(`refused: the console answers only to 127.0.0.1:${port()} or localhost:${port()} (this request named host "${host}")\n`, 421);
    }
    return next();
  };
}

/**
 * The per-start token. `?token=` on any GET sets the HttpOnly SameSite=Strict cookie and redirects
 * to the same URL without the token, so it leaves the address bar and the history. Every other
 * request needs the cookie; without it the answer is 401 with what to do.
 */
export function tokenGate(secrets: ConsoleSecrets, render401: (c: Context) => Response | Promise<Response>): MiddlewareHandler {
  return async (c, next) => {
    const url = new URL(c.req.url);
    const fromQuery = url.searchParams.get('token') ?? undefined;
    if (fromQuery !== undefined && c.req.method === 'GET') {
      if (!sameSecret(fromQuery, secrets.token)) return render401(c);
      setCookie(c, SESSION_COOKIE, secrets.token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      url.searchParams.delete('token');
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    if (!sameSecret(getCookie(c, SESSION_COOKIE), secrets.token)) return render401(c);
    return next();
  };
}

/** Whether a POST carries this start's CSRF token and comes from the console's own origin. */
export function validPost(c: Context, form: Record<string, unknown>, secrets: ConsoleSecrets): boolean {
  const origin = c.req.header('origin');
  const host = c.req.header('host');
  if (origin !== undefined && origin !== `http://${host}`) return false;
  const given = form[CSRF_FIELD];
  return typeof given === 'string' && sameSecret(given, secrets.csrf);
}
