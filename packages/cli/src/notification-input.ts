import type { NotificationParams } from '@herald/sdk';
import { isWalletAddress } from './wallet-address.js';

export const CATEGORIES = ['defi', 'governance', 'system', 'marketing', 'security'] as const;
export const PRIORITIES = ['normal', 'important', 'critical'] as const;
export const CHANNELS = ['email', 'telegram', 'sms'] as const;

type Rule = (value: unknown) => string | undefined;

const text =
  (max: number): Rule =>
  (value) =>
    typeof value !== 'string' ? 'must be a string' : value.length === 0 ? 'must not be empty' : value.length > max ? `must be at most ${max} characters` : undefined;
const oneOf =
  (values: readonly string[]): Rule =>
  (value) =>
    typeof value === 'string' && values.includes(value) ? undefined : `must be one of: ${values.join(', ')}`;
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The POST /v1/notify body as the gateway validates it (the tier's body size limit aside). */
const RULES: Record<keyof NotificationParams, Rule> = {
  wallet: (value) => (typeof value !== 'string' ? 'must be a string' : isWalletAddress(value) ? undefined : 'must be a Solana wallet address (base58, 32 bytes)'),
  subject: text(998),
  body: text(Number.MAX_SAFE_INTEGER),
  category: oneOf(CATEGORIES),
  priority: oneOf(PRIORITIES),
  preferredChannel: oneOf(CHANNELS),
  receipt: (value) => (typeof value === 'boolean' ? undefined : 'must be true or false'),
  templateId: text(100),
  templateVariables: (value) => (isPlainObject(value) ? undefined : 'must be an object'),
  idempotencyKey: text(255),
};
const REQUIRED = ['wallet', 'subject', 'body', 'category'] as const;

/**
 * Why a value is not a notification the gateway would accept; empty when it is. Unknown fields
 * are refused here although the gateway drops them: in a hand-written file they are typos
 * (`preferedChannel`) whose intent would be silently lost.
 */
export function notificationProblems(value: unknown): string[] {
  if (!isPlainObject(value)) return ['must be a JSON object'];
  const problems: string[] = [];
  for (const field of REQUIRED) if (value[field] === undefined) problems.push(`${field} is required`);
  for (const [field, fieldValue] of Object.entries(value)) {
    const rule = RULES[field as keyof NotificationParams];
    if (!rule) problems.push(`unknown field "${field}"`);
    else if (fieldValue !== undefined) {
      const problem = rule(fieldValue);
      if (problem) problems.push(`${field} ${problem}`);
    }
  }
  return problems;
}
