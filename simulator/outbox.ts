/** An "e-mail" the simulated providers would have sent: keys after onboarding or reset, KYC tokens. */
export interface OutboxMessage {
  to: string;
  kind: 'partner-onboarded' | 'partner-keys-reset' | 'kyc-verification-token';
  at: string;
  /** The one-time link the real service would e-mail (GET it once to read the keys). */
  link?: string;
  /** Keys issued (onboarding and reset), in the provider secret's snake_case shape. */
  credentials?: PartnerCredentials;
  /** The 6-digit KYC verification token. */
  token?: string;
}

/** The fields of payrelay's provider secret, as the simulator issues them. */
export interface PartnerCredentials {
  partner_public_key: string;
  partner_secret_key: string;
  merchant_secret_key: string;
  partner_id: string;
  platform_merchant_id: string;
}

/** The simulated mailbox shared by both services. */
export class Outbox {
  private readonly messages: OutboxMessage[] = [];

  add(message: Omit<OutboxMessage, 'at'>): OutboxMessage {
    const stored = { ...message, at: new Date().toISOString() };
    this.messages.push(stored);
    return stored;
  }

  /** Messages, optionally only those to one address, oldest first. */
  list(to?: string): OutboxMessage[] {
    return structuredClone(to ? this.messages.filter((m) => m.to === to) : this.messages);
  }

  clear(): void {
    this.messages.length = 0;
  }
}
