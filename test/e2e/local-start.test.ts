import { describe, expect, it } from 'vitest';
import { LocalStackError, startLocalStack } from '@local/stack';

describe('npm start with a setting a function refuses', () => {
  it('stops with one line naming the function, the variable and the rule, without a class name', async () => {
    const started = startLocalStack({ gatewayPort: 0, simulatorPort: 0, handlerEnv: { POWERTOOLS_LOG_LEVEL: 'ERROR', NAME_MATCH_THRESHOLD: 'banana' } });
    await expect(started).rejects.toThrow(LocalStackError);
    await expect(started).rejects.toThrow(
      /^the local stack could not start: cannot load functions\/[a-z-]+\.ts: invalid configuration: NAME_MATCH_THRESHOLD: must be a number$/,
    );
  });
});
