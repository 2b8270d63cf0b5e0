import type { Command} from 'commander';
import { Argument } from 'commander';
import { randomBytes } from 'node:crypto';
import { KYC_SECRET, PROVIDER_SECRET } from '@shared/config/resources';
import { contextOf, nonEmptyText, withExample } from '../context';
import { promptHidden, promptVisible, readJsonObject } from '../io';
import { CliError, EXIT, printTable } from '../output';
import { requireEnv } from '../target';

/** Fields that are identifiers, shown while typed; every other field is a secret and never echoed. */
const VISIBLE_FIELDS = new Set(['partner_id', 'platform_merchant_id', 'app_id']);

const SECRETS = { provider: PROVIDER_SECRET, kyc: KYC_SECRET } as const;
type SecretName = keyof typeof SECRETS;

/** 48 URL-safe random characters (288 bits): the KYC callback URL's unguessable token. */
function newCallbackToken(): string {
  return randomBytes(36).toString('base64url');
}

/** `payrelay secrets put provider|kyc`. */
export function registerSecretsCommands(program: Command): void {
  const secrets = withExample(
    program.command('secrets').description('store provider and KYC keys in Secrets Manager (never echoed)'),
    'payrelay secrets put provider --file provider-keys.json',
  );
  withExample(
    secrets
      .command('put')
      .addArgument(new Argument('<secret>', 'which secret').choices(Object.keys(SECRETS)))
      .option('--file <file>', 'JSON file with the secret fields (otherwise you are prompted; secret values are not echoed)', nonEmptyText)
      .option(
        '--new-callback-token',
        'kyc only: generate a new random callback_token instead of reading one (first setup, or a deliberate rotation: KYC orders created before it can no longer call back)',
      ),
    'payrelay secrets put provider --file provider-keys.json',
    'payrelay secrets put kyc --new-callback-token   # first setup: asks for app_id, generates the token',
    'payrelay secrets put kyc                        # interactive',
  )
    .description(
      `validate and store a secret. provider fields: ${PROVIDER_SECRET.fields.join(', ')}; kyc fields: ${KYC_SECRET.fields.join(', ')}. ` +
        'Running functions pick the new value up within 5 minutes, or at once after a 401.',
    )
    .action(async (name: SecretName, opts: { file?: string; newCallbackToken?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const spec = SECRETS[name];
      if (opts.newCallbackToken && name !== 'kyc') throw new CliError('--new-callback-token applies to the kyc secret only; nothing was stored', EXIT.usage);
      const generated: Record<string, string> = opts.newCallbackToken ? { callback_token: newCallbackToken() } : {};
      const target = await ctx.target();
      const secretId = requireEnv(target, spec.env);

      let value: Record<string, unknown>;
      if (opts.file) value = { ...readJsonObject(opts.file), ...generated };
      else {
        value = { ...generated };
        for (const field of spec.fields.filter((f) => !(f in generated))) {
          value[field] = VISIBLE_FIELDS.has(field) ? await promptVisible(`${field}: `) : await promptHidden(`${field} (hidden): `);
        }
      }
      const { providerSecretSchema, kycSecretSchema } = await import('@shared/adapters/secrets');
      const v = await import('@shared/validation/valibot');
      const parsed = v.safeParse(name === 'provider' ? providerSecretSchema : kycSecretSchema, value);
      const unknown = Object.keys(value).filter((k) => !(spec.fields as readonly string[]).includes(k));
      if (!parsed.success) {
        // Field names and rules only (the shared messages never quote a value): a value must never be echoed back.
        // Unknown fields are said in the same line, so one fix of the file settles every problem.
        const problems = [
          ...parsed.issues.map((i) => `${v.issuePath(i)} ${i.message}`),
          ...(unknown.length > 0 ? [`unknown field(s) ${unknown.join(', ')}`] : []),
        ];
        throw new CliError(`the ${name} secret is not valid: ${problems.join('; ')}; nothing was stored`, EXIT.invalidInput);
      }
      if (unknown.length > 0) throw new CliError(`unknown field(s) in the ${name} secret: ${unknown.join(', ')}; nothing was stored`, EXIT.invalidInput);

      const { PutSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
      const { secretsClient } = await import('@shared/adapters/secrets-manager-client');
      const out = await secretsClient.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: JSON.stringify(parsed.output) }));
      const result = { secret: name, secretId, versionId: out.VersionId, fields: Object.keys(parsed.output) };
      ctx.out.result(result, () => {
        printTable(['secret', 'stored in', 'version', 'fields'], [[name, secretId, out.VersionId, result.fields.join(', ')]]);
      });
    });
}
