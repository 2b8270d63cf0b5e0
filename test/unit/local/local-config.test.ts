import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_CONFIG_PATH, LocalConfigError, loadLocalConfig } from '@local/config';

const dir = mkdtempSync(join(tmpdir(), 'payrelay-local-config-'));

describe('the local config file (npm start -- --config)', () => {
  it('reads the repository\'s own file', () => {
    expect(loadLocalConfig(LOCAL_CONFIG_PATH).gatewayPort).toEqual(expect.any(Number));
  });

  it('says a missing file is missing, naming the default, and a file that is not JSON is not JSON', () => {
    const missing = join(dir, 'nope.json');
    expect(() => loadLocalConfig(missing)).toThrow(new LocalConfigError(`no such file: ${missing} (--config names the local config file; the default is ${LOCAL_CONFIG_PATH})`));
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{ "gatewayPort": 3000,');
    expect(() => loadLocalConfig(broken)).toThrow(/broken\.json is not valid JSON: /);
  });
});
