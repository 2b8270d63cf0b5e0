import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('payrelay console', () => {
  it('says on stderr at once that it is starting, before it looks for the stack (which can take seconds)', async () => {
    // No stack behind this state file: the console stops at the target, after its first line.
    vi.stubEnv('PAYRELAY_STATE_FILE', join(mkdtempSync(join(tmpdir(), 'payrelay-console-start-')), 'state.json'));
    vi.resetModules();
    const { run } = await import('@cli/program');
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const code = await run(['node', 'payrelay', 'console', '--port', '0']);
    const lines = errors.mock.calls.map((call) => String(call[0]));
    expect(lines[0]).toBe('starting the console (reading the target, then serving on 127.0.0.1, on a free port)…');
    // Then the target's own failure: nothing on stdout, where the URL goes.
    expect(lines[1]).toMatch(/npm start/);
    expect(code).toBe(5);
    expect(out).not.toHaveBeenCalled();
  });
});
