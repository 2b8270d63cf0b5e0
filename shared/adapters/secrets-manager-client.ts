import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { captured } from '@shared/observability/tracer';

/*
 * The Secrets Manager client of this execution environment, created once at module load and
 * captured by the tracer. Its own module, so only the bundles that read a secret load it. The local
 * endpoint comes from AWS_ENDPOINT_URL_SECRETS_MANAGER.
 */

export const secretsClient = captured(new SecretsManagerClient({}));
