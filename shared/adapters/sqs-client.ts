import { SQSClient } from '@aws-sdk/client-sqs';
import { captured } from '@shared/observability/tracer';

/*
 * The SQS client of this execution environment, created once at module load and captured by the
 * tracer. Its own module, so only the bundles that send to or change a queue load it. The local
 * endpoint comes from AWS_ENDPOINT_URL_SQS.
 */

// fauxqs answers with queue URLs on its own host; use the configured endpoint, never the queue URL's host.
export const sqsClient = captured(new SQSClient({ useQueueUrlAsEndpoint: false }));
