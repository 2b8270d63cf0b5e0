/**
 * Stack names and output keys of a payrelay deployment. The operator CLI reads a deployed stage's
 * outputs by these names, so they are constants shared by infra and the CLI (and listed in docs/deploy.md).
 */

/**
 * CloudFormation stack names of a stage. The app stack carries every output an operator needs, so
 * `payrelay --stack payrelay-<stage>` reads everything from one stack; the data stack holds the
 * tables, queues, secrets and egress IPs and is retained by default.
 */
export function stackNames(stage: string): { stateful: string; stateless: string } {
  return { stateful: `payrelay-${stage}-data`, stateless: `payrelay-${stage}` };
}

/** Output keys of the app (stateless) stack. */
export const OUTPUT = {
  apiUrl: 'ApiUrl',
  kycCallbackBaseUrl: 'KycCallbackBaseUrl',
  /**
   * Only on a stage with `kyc.enabled: false` (which has no KycCallbackBaseUrl or KycApiBaseUrl): says
   * so, and the CLI's KYC commands refuse such a stack by it.
   */
  kycNotDeployed: 'KycNotDeployed',
  payoutNotificationUrl: 'PayoutNotificationUrl',
  payoutsTableName: 'PayoutsTableName',
  eventsTableName: 'EventsTableName',
  kycTableName: 'KycTableName',
  quarantineTableName: 'QuarantineTableName',
  collectionsTableName: 'CollectionsTableName',
  payoutsQueueUrl: 'PayoutsQueueUrl',
  payoutsDlqUrl: 'PayoutsDlqUrl',
  providerSecretArn: 'ProviderSecretArn',
  kycSecretArn: 'KycSecretArn',
  accountKeySecretArn: 'AccountKeySecretArn',
  payoutApiBaseUrl: 'PayoutApiBaseUrl',
  kycApiBaseUrl: 'KycApiBaseUrl',
  egressIps: 'EgressIps',
  dashboardName: 'DashboardName',
  /** Only with `api.domain`: the regional hostname the custom domain's DNS record points at. */
  apiDomainTarget: 'ApiDomainTarget',
  /** Only with an alarm destination (`alarms.email` and/or `alarms.topicArn`): comma-separated topic ARNs. */
  alarmTopicArn: 'AlarmTopicArn',
  /**
   * The payout service client's settings the stage sets, as the functions get them (a JSON object of
   * SIGNING_PROFILE, BEARER_PREFIX and PROVIDER_STATUS_MAP; `{}` when it sets none): the CLI's
   * `--stack` commands sign and read GetPayout with exactly these.
   */
  providerClientSettings: 'ProviderClientSettings',
} as const;

/** The env variables of PROVIDER_CLIENT_SETTINGS' JSON object (and nothing else). */
export const PROVIDER_CLIENT_SETTINGS = ['SIGNING_PROFILE', 'BEARER_PREFIX', 'PROVIDER_STATUS_MAP'] as const;
