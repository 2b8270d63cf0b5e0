import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, KYC_CATCH_UP_FUNCTION } from '@shared/config/functions';
import { OUTPUT } from '@infra/outputs';
import { synthPayrelay, type SynthesizedPayrelay } from './cdk-app';

/*
 * A stage that leaves the KYC service out (kyc.enabled: false), beside its twin with KYC on: what the
 * app stack leaves out, and that the data stack is the same either way. Both synthesize under the
 * cdk-nag AwsSolutions pack (synthPayrelay throws on an unacknowledged finding).
 */

/** Static egress (so the egress rules show), a custom domain, alarms by e-mail; the KYC URL on its own port. */
const STAGE = {
  stage: 'payouts',
  payoutApiBaseUrl: 'https://payout.example.com',
  kycApiBaseUrl: 'https://kyc.example.com:8443',
  egress: { staticIps: true },
  alarms: { email: 'oncall@example.com' },
  api: { domain: { name: 'callbacks.example.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0' } },
};

let off: SynthesizedPayrelay;
let on: SynthesizedPayrelay;

beforeAll(() => {
  off = synthPayrelay({ ...STAGE, kyc: { enabled: false } });
  on = synthPayrelay(STAGE);
}, 240_000);

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
const resourcesOf = (template: Template, type: string): Resources => template.findResources(type) as Resources;
const functionNames = (template: Template): string[] => Object.values(resourcesOf(template, 'AWS::Lambda::Function')).map((r) => String(r.Properties.FunctionName));

/** Every IAM statement of the app stack, with the role(s) its policy is attached to. */
function statements(template: Template): Array<{ roles: string; actions: string[]; resource: string }> {
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy')).flatMap((policy) =>
    (policy.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement.map((statement) => ({
      roles: JSON.stringify(policy.Properties.Roles),
      actions: Array.isArray(statement.Action) ? statement.Action : [statement.Action],
      resource: JSON.stringify(statement.Resource),
    })),
  );
}

describe('a stage with kyc.enabled: false', () => {
  it('serves no KYC route: the payout notification route alone', () => {
    const routeKeys = Object.values(resourcesOf(off.stateless, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey);
    expect(routeKeys).toEqual(['POST /callbacks/payout-notifications']);
    expect(Object.values(resourcesOf(on.stateless, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey)).toContain('POST /callbacks/kyc/{token}');
  });

  it('deploys neither the KYC receiver nor the KYC catch-up, nor the catch-up schedule', () => {
    const names = functionNames(off.stateless);
    expect(names).not.toContain(`payrelay-payouts-${FUNCTIONS.kycCallback.id}`);
    expect(names).not.toContain(`payrelay-payouts-${KYC_CATCH_UP_FUNCTION.id}`);
    expect(names.sort()).toEqual(
      [FUNCTIONS.payoutWorker, FUNCTIONS.reconciler, FUNCTIONS.payoutChecker, FUNCTIONS.payoutNotification, FUNCTIONS.callbackApplier].map((f) => `payrelay-payouts-${f.id}`).sort(),
    );
    expect(JSON.stringify(resourcesOf(off.stateless, 'AWS::Events::Rule'))).not.toMatch(/KYC|kyc/);
    expect(off.payrelay.stateless?.functions['kyc-callback']).toBeUndefined();
  });

  it('has no KYC alarm and no KYC line on the dashboard', () => {
    const alarmNames = Object.values(resourcesOf(off.stateless, 'AWS::CloudWatch::Alarm')).map((r) => String(r.Properties.AlarmName));
    expect(alarmNames.filter((name) => /kyc/i.test(name))).toEqual([]);
    expect(alarmNames).toContain('payrelay-payouts-Api5xx');
    expect(Object.values(resourcesOf(on.stateless, 'AWS::CloudWatch::Alarm')).map((r) => String(r.Properties.AlarmName))).toEqual(
      expect.arrayContaining(['payrelay-payouts-KycDecisionChanged', 'payrelay-payouts-KycCallbackErrors', 'payrelay-payouts-KycCallbackThrottles']),
    );
    const alarmTexts = JSON.stringify(resourcesOf(off.stateless, 'AWS::CloudWatch::Alarm'));
    expect(alarmTexts).not.toMatch(/KYC|Kyc|kyc/);
    const dashboard = JSON.stringify(resourcesOf(off.stateless, 'AWS::CloudWatch::Dashboard'));
    expect(dashboard).not.toMatch(/Kyc|kyc/);
    expect(JSON.stringify(resourcesOf(on.stateless, 'AWS::CloudWatch::Dashboard'))).toMatch(/KycDecisionChanged/);
  });

  it('grants no role anything on the KYC secret, and the KYC table to the callback applier alone', () => {
    expect(statements(off.stateless).filter((s) => /KycSecret/.test(s.resource))).toEqual([]);
    // The applier's handler still names the KYC table at start (KYC_TABLE_NAME), for KYC callbacks stored before KYC was turned off.
    const kycTable = statements(off.stateless).filter((s) => /KycTable/.test(s.resource));
    expect(kycTable.map((s) => [s.roles.match(/"(\w+)Role/)?.[1], s.actions])).toEqual([['CallbackApplier', ['dynamodb:GetItem', 'dynamodb:PutItem']]]);
    // The twin with KYC on does grant them (the receiver, the applier): the filter above finds what it looks for.
    expect(statements(on.stateless).filter((s) => /KycSecret/.test(s.resource)).length).toBeGreaterThan(0);
    expect(statements(on.stateless).filter((s) => /KycTable/.test(s.resource)).length).toBeGreaterThan(0);
  });

  it('gives no function a KYC variable but the applier its KYC table', () => {
    for (const fn of Object.values(resourcesOf(off.stateless, 'AWS::Lambda::Function'))) {
      const variables = Object.keys((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables);
      const applier = fn.Properties.FunctionName === `payrelay-payouts-${FUNCTIONS.callbackApplier.id}`;
      expect(variables.filter((name) => name.startsWith('KYC_')), String(fn.Properties.FunctionName)).toEqual(applier ? ['KYC_TABLE_NAME'] : []);
    }
  });

  it('opens no egress to the KYC service: only the payout service and AWS APIs on 443', () => {
    const ports = (template: Template) =>
      Object.values(resourcesOf(template, 'AWS::EC2::SecurityGroup')).flatMap((group) =>
        ((group.Properties.SecurityGroupEgress as Array<{ FromPort?: number }> | undefined) ?? []).map((rule) => rule.FromPort),
      );
    expect(ports(off.stateless)).not.toContain(8443);
    expect(ports(on.stateless)).toContain(8443);
  });

  it('outputs KycNotDeployed instead of the KYC callback URL and the KYC service URL', () => {
    const outputs = off.stateless.findOutputs('*');
    expect(Object.keys(outputs)).not.toContain(OUTPUT.kycCallbackBaseUrl);
    expect(Object.keys(outputs)).not.toContain(OUTPUT.kycApiBaseUrl);
    off.stateless.hasOutput(OUTPUT.kycNotDeployed, { Description: Match.stringLikeRegexp('kyc: \\{ enabled: true \\}') });
    expect(Object.keys(on.stateless.findOutputs('*'))).not.toContain(OUTPUT.kycNotDeployed);
  });

  it('keeps the data stack exactly as with KYC on: the KYC table and secret stay, with the same template', () => {
    expect(off.stateful.toJSON()).toEqual(on.stateful.toJSON());
    off.stateful.hasResourceProperties('AWS::DynamoDB::Table', { TableName: 'payrelay-payouts-kyc' });
    off.stateful.hasResourceProperties('AWS::SecretsManager::Secret', { Name: 'payrelay-payouts-kyc' });
  });
});
