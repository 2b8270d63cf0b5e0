import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createConsoleApp } from './app';
import { newConsoleSecrets, type ConsoleSecrets } from './security';
import type { ConsoleServices } from './services';

/** The loopback address the console binds; never anything reachable from another machine. */
export const CONSOLE_HOST = '127.0.0.1';

export interface ConsoleHandle {
  /** The base URL (no token). */
  readonly url: string;
  /** The URL to open: the base URL with this start's token. */
  readonly loginUrl: string;
  readonly port: number;
  readonly secrets: ConsoleSecrets;
  close(): Promise<void>;
}

/** Starts the console on 127.0.0.1 (port 0 picks a free one) with fresh per-start secrets. */
export async function startConsole(options: { services: ConsoleServices; port: number; clock?: () => Date }): Promise<ConsoleHandle> {
  const secrets = newConsoleSecrets();
  let port = options.port;
  const app = createConsoleApp({ services: options.services, secrets, port: () => port, ...(options.clock ? { clock: options.clock } : {}) });
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: options.port, hostname: CONSOLE_HOST }, () => resolve(s));
    s.once('error', reject);
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://${CONSOLE_HOST}:${port}`;
  return {
    url,
    loginUrl: `${url}/?token=${secrets.token}`,
    port,
    secrets,
    close: () =>
      new Promise<void>((resolve) => {
        options.services.close();
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
