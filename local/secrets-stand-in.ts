import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * LOCAL ONLY. A minimal Secrets Manager stand-in for the local stack and the tests: no emulator of
 * Secrets Manager exists on npm or in Debian. It speaks the SDK's JSON 1.1 protocol for the four
 * calls payrelay makes (CreateSecret, GetSecretValue, PutSecretValue, DescribeSecret), keeps values in
 * memory and is never deployed. Like the real service, each put makes a new version AWSCURRENT and
 * moves the label AWSPREVIOUS to the version it replaced; GetSecretValue takes VersionStage or VersionId. Production reads the real service through the same SDK client.
 */

/** One version of a secret's value and the staging labels it holds (AWSCURRENT, AWSPREVIOUS). */
interface StoredVersion {
  versionId: string;
  secretString: string;
  createdDate: number;
  stages: string[];
}

interface StoredSecret {
  arn: string;
  name: string;
  /** Newest last; only versions that still hold a label are kept, as Secrets Manager deprecates the rest. */
  versions: StoredVersion[];
  createdDate: number;
  lastChangedDate: number;
}

const ACCOUNT_ID = '000000000000';

class StandInError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = type;
  }
}

export interface SecretsStandIn {
  readonly endpoint: string;
  /** Reads a value directly (tests); never used by runtime code. */
  peek(secretId: string): string | undefined;
  stop(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 (port 0 picks a free port). */
export async function startSecretsStandIn(options: { port?: number; region?: string } = {}): Promise<SecretsStandIn> {
  const region = options.region ?? 'eu-west-1';
  const secrets = new Map<string, StoredSecret>();

  const find = (secretId: unknown): StoredSecret => {
    if (typeof secretId !== 'string' || secretId.length === 0) {
      throw new StandInError('InvalidParameterException', 'SecretId is required');
    }
    const secret = secrets.get(secretId) ?? [...secrets.values()].find((s) => s.arn === secretId);
    if (!secret) throw new StandInError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return secret;
  };

  const setValue = (secret: StoredSecret, value: unknown, token: unknown): string => {
    if (typeof value !== 'string') throw new StandInError('InvalidParameterException', 'SecretString is required');
    const now = Date.now() / 1000;
    const current = secret.versions.find((v) => v.stages.includes('AWSCURRENT'));
    for (const version of secret.versions) version.stages = version.stages.filter((stage) => stage !== 'AWSPREVIOUS');
    if (current) current.stages = current.stages.filter((stage) => stage !== 'AWSCURRENT').concat('AWSPREVIOUS');
    const versionId = typeof token === 'string' && token.length > 0 ? token : randomUUID();
    secret.versions = secret.versions.filter((v) => v.stages.length > 0);
    secret.versions.push({ versionId, secretString: value, createdDate: now, stages: ['AWSCURRENT'] });
    secret.lastChangedDate = now;
    return versionId;
  };

  const versionOf = (secret: StoredSecret, input: Record<string, unknown>): StoredVersion => {
    const stage = typeof input.VersionStage === 'string' ? input.VersionStage : undefined;
    const id = typeof input.VersionId === 'string' ? input.VersionId : undefined;
    const version = id
      ? secret.versions.find((v) => v.versionId === id)
      : secret.versions.find((v) => v.stages.includes(stage ?? 'AWSCURRENT'));
    if (!version) {
      throw new StandInError(
        'ResourceNotFoundException',
        `Secrets Manager can't find the specified secret value for ${id ? `VersionId: ${id}` : `staging label: ${stage ?? 'AWSCURRENT'}`}`,
      );
    }
    return version;
  };

  const operations: Record<string, (input: Record<string, unknown>) => unknown> = {
    CreateSecret(input) {
      const name = input.Name;
      if (typeof name !== 'string' || name.length === 0) throw new StandInError('InvalidParameterException', 'Name is required');
      if (secrets.has(name)) throw new StandInError('ResourceExistsException', `The secret ${name} already exists.`);
      const now = Date.now() / 1000;
      const secret: StoredSecret = {
        name,
        arn: `arn:aws:secretsmanager:${region}:${ACCOUNT_ID}:secret:${name}-${randomBytes(3).toString('hex')}`,
        versions: [],
        createdDate: now,
        lastChangedDate: now,
      };
      secrets.set(name, secret);
      const versionId = input.SecretString === undefined ? undefined : setValue(secret, input.SecretString, input.ClientRequestToken);
      return { ARN: secret.arn, Name: secret.name, VersionId: versionId };
    },
    GetSecretValue(input) {
      const secret = find(input.SecretId);
      const version = versionOf(secret, input);
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.versionId,
        SecretString: version.secretString,
        VersionStages: [...version.stages],
        CreatedDate: version.createdDate,
      };
    },
    PutSecretValue(input) {
      const secret = find(input.SecretId);
      const versionId = setValue(secret, input.SecretString, input.ClientRequestToken);
      return { ARN: secret.arn, Name: secret.name, VersionId: versionId, VersionStages: ['AWSCURRENT'] };
    },
    DescribeSecret(input) {
      const secret = find(input.SecretId);
      return {
        ARN: secret.arn,
        Name: secret.name,
        CreatedDate: secret.createdDate,
        LastChangedDate: secret.lastChangedDate,
        VersionIdsToStages: Object.fromEntries(secret.versions.map((v) => [v.versionId, [...v.stages]])),
      };
    },
  };

  const reply = (res: ServerResponse, status: number, body: unknown, errorType?: string): void => {
    const headers: Record<string, string> = { 'content-type': 'application/x-amz-json-1.1' };
    if (errorType) headers['x-amzn-errortype'] = errorType;
    res.writeHead(status, headers).end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = operations[target.replace(/^secretsmanager\./, '')];
    if (!target.startsWith('secretsmanager.') || !operation) {
      reply(res, 400, { __type: 'UnknownOperationException', message: `local stand-in does not support ${target || 'this request'}` }, 'UnknownOperationException');
      return;
    }
    try {
      const raw = Buffer.concat(chunks).toString('utf8');
      const input = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      reply(res, 200, operation(input));
    } catch (error) {
      const type = error instanceof StandInError ? error.type : 'InvalidRequestException';
      const message = error instanceof Error ? error.message : 'invalid request';
      reply(res, 400, { __type: type, message }, type);
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    peek: (secretId) => {
      try {
        return find(secretId).versions.find((v) => v.stages.includes('AWSCURRENT'))?.secretString;
      } catch {
        return undefined;
      }
    },
    stop: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
