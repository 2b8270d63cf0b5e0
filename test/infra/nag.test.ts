import { Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { buildTestApp } from './cdk-app';

const props = {
  stage: 'prod',
  payoutApiBaseUrl: 'https://payout.example.com',
  kycApiBaseUrl: 'https://kyc.example.com',
  egress: { staticIps: true, natGateways: 2 },
  alarms: { email: 'oncall@example.com' },
};

/** Every cdk-nag acknowledgment recorded in the construct tree, with the path it applies to. */
function acknowledgments(root: IConstruct): Array<{ path: string; id: string; reason: string }> {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({ path: construct.node.path, id, reason }))),
  );
}

describe('cdk-nag AwsSolutions', () => {
  it('fails synth on a finding nobody acknowledged (the check is live on the payrelay stacks)', () => {
    const { app, payrelay } = buildTestApp(props);
    new Queue(payrelay.stateful, 'UnencryptedQueue', { enforceSSL: false });
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  });

  it('acknowledges only specific rules, each with a reason a reviewer can check', () => {
    const { payrelay } = buildTestApp(props);
    // aws-cdk-lib records its own CloudFormation-Validate acknowledgments (e.g. for the VPC's AZs): not ours.
    const acks = acknowledgments(payrelay).filter((a) => !a.id.startsWith('CloudFormation-Validate::'));
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id, ack.path).toMatch(/^AwsSolutions::AwsSolutions-[A-Z]+\d+/);
      expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThanOrEqual(60);
    }
    // Wildcards are acknowledged one finding at a time, never a whole IAM5 rule.
    for (const ack of acks.filter((a) => a.id.includes('IAM5'))) expect(ack.id).toMatch(/IAM5\[Resource::\*\]$/);
    expect(new Set(acks.map((a) => a.id.replace(/^AwsSolutions::/, '').replace(/\[.*$/, '')))).toEqual(
      new Set(['AwsSolutions-SMG4', 'AwsSolutions-L1', 'AwsSolutions-IAM4', 'AwsSolutions-IAM5', 'AwsSolutions-APIG4']),
    );
  });
});
