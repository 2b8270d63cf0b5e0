/**
 * AWS list prices used for the cost figures: us-east-1, as recorded by the benchmark's author in
 * November 2026 from the public pricing pages (the bench has no network; check them before quoting).
 */
export const PRICES = {
  recorded: '2026-11 (us-east-1 list prices, recorded by hand; free tiers ignored)',
  lambdaArmGbSecond: 0.0000133334,
  lambdaRequest: 0.2 / 1e6,
  httpApiRequest: 1.0 / 1e6,
  dynamoWriteUnit: 0.625 / 1e6,
  dynamoReadUnit: 0.125 / 1e6,
  sqsRequest: 0.4 / 1e6,
  secretsManagerCall: 0.05 / 1e4,
} as const;

/** Cost of `invocations` Lambda invocations (arm64) of `billedMs` each (Lambda rounds up to 1 ms) at `memoryMb`. */
export function lambdaInvocationCost(billedMs: number, memoryMb: number, invocations = 1): number {
  return invocations * (PRICES.lambdaRequest + (Math.ceil(billedMs) / 1000) * (memoryMb / 1024) * PRICES.lambdaArmGbSecond);
}

/** What one unit of work (a webhook, a payout) uses; fractions are averages. */
export interface UnitUsage {
  readonly httpApiRequests: number;
  /** Lambda invocations and their mean billed duration, per function. */
  readonly lambda: ReadonlyArray<{ fn: string; invocations: number; billedMs: number; memoryMb: number }>;
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly sqsRequests: number;
  readonly secretsCalls: number;
}

/** Cost per million units, by line, in USD. */
export function costPerMillion(usage: UnitUsage): Record<string, number> {
  const lines: Record<string, number> = {
    apiGateway: usage.httpApiRequests * PRICES.httpApiRequest,
    lambda: usage.lambda.reduce((sum, l) => sum + lambdaInvocationCost(l.billedMs, l.memoryMb, l.invocations), 0),
    dynamoDb: usage.writeUnits * PRICES.dynamoWriteUnit + usage.readUnits * PRICES.dynamoReadUnit,
    sqs: usage.sqsRequests * PRICES.sqsRequest,
    secretsManager: usage.secretsCalls * PRICES.secretsManagerCall,
  };
  for (const key of Object.keys(lines)) lines[key] = (lines[key] as number) * 1e6;
  lines.total = Object.values(lines).reduce((a, b) => a + b, 0);
  return lines;
}
