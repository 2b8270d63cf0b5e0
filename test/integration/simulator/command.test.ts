import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';

/** Waits until the child's stdout contains a line matching `pattern`, returning the match. */
function waitForLine(child: ReturnType<typeof spawn>, pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${seen}`)), timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
  });
}

function groupAlive(group: number): boolean {
  try {
    process.kill(group, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npx tsx simulator/main.ts', () => {
  it('listens on the given port, answers the KYC types endpoint and exits cleanly on SIGINT', async () => {
    const child = spawn('npx', ['tsx', 'simulator/main.ts', '--port', '0', '--log', 'silent'], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so the test can send SIGINT to the group the way Ctrl-C does.
      detached: true,
    });
    const group = -(child.pid as number);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      const match = await waitForLine(child, /KYC service:\s+(http:\/\/127\.0\.0\.1:\d+\/kyc)/, 25_000);
      const kycBaseUrl = match[1] as string;

      const res = await fetch(`${kycBaseUrl}/api/v1/kyc_type/`, { headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(200);
      const types = (await res.json()) as Array<{ _id: string; flow_id: string; name: string }>;
      expect(types.map((t) => t.name).sort()).toEqual(['Business', 'Individual']);
      for (const type of types) {
        expect(type._id).not.toBe('');
        expect(type.flow_id).not.toBe('');
      }

      const stopped = waitForLine(child, /simulator stopped/, 10_000);
      const exited = once(child, 'exit');
      process.kill(group, 'SIGINT');
      await stopped;
      const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
      // npx and tsx report a Ctrl-C'd program the shell way (130 or the signal itself); the clean
      // stop is proven by the simulator's own last line, an empty stderr, the closed port and no
      // process left in the group.
      expect(code === 0 || code === 130 || signal === 'SIGINT').toBe(true);
      expect(stderr.replace(/npm warn.*\n?/g, '')).toBe('');
      await expect(fetch(`${kycBaseUrl}/api/v1/kyc_type/`)).rejects.toThrow();
      await expect.poll(() => groupAlive(group), { timeout: 5000 }).toBe(false);
    } finally {
      try {
        process.kill(group, 'SIGKILL');
      } catch {
        // The group is already gone: the clean exit the test wants.
      }
    }
  }, 40_000);
});
