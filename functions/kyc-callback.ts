import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** Receives KYC callbacks on POST /callbacks/kyc/{token}. Full behaviour lands in issue 5. */
export const handler = async (_event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => ({
  statusCode: 503,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message: 'not ready' }),
});
