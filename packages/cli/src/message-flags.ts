import type { Category, Channel, NotificationParams, Priority } from '@herald/sdk';
import { Option, type Command } from 'commander';
import { usageError } from './exit-codes.js';
import { parseJsonObject } from './json-input.js';
import { CATEGORIES, CHANNELS, notificationProblems, PRIORITIES } from './notification-input.js';

/** Flags naming the fields of a message, shared by notify send, notify preview, schedule and broadcast. */
export interface MessageFlags {
  wallet?: string;
  subject?: string;
  body?: string;
  category?: Category;
  priority?: Priority;
  preferredChannel?: Channel;
  receipt?: boolean;
  templateId?: string;
  templateVariables?: string;
}

type Field = keyof MessageFlags;

const OPTIONS: Record<Field, () => Option> = {
  wallet: () => new Option('--wallet <address>', 'recipient Solana wallet address'),
  subject: () => new Option('--subject <text>', 'subject line (about 100 characters advised)'),
  body: () => new Option('--body <markdown>', 'message body, Markdown'),
  category: () => new Option('--category <category>', 'message category').choices(CATEGORIES),
  priority: () => new Option('--priority <priority>', 'normal (default), important, or critical (falls back to SMS)').choices(PRIORITIES),
  preferredChannel: () => new Option('--preferred-channel <channel>', 'channel to use when the wallet can be reached on it').choices(CHANNELS),
  receipt: () => new Option('--receipt', 'request an on-chain proof of delivery'),
  templateId: () => new Option('--template-id <id>', 'email template (tmpl_…); Growth tier and above'),
  templateVariables: () => new Option('--template-variables <json>', 'template values as a JSON object'),
};

export const SEND_FIELDS: Field[] = ['wallet', 'subject', 'body', 'category', 'priority', 'preferredChannel', 'receipt', 'templateId', 'templateVariables'];

export function addMessageOptions(command: Command, fields: Field[] = SEND_FIELDS): Command {
  for (const field of fields) command.addOption(OPTIONS[field]());
  return command;
}

/** The fields the flags give, in the API's names; flags not given are left out. */
export function messageFrom(flags: MessageFlags): Partial<NotificationParams> {
  const { templateVariables, ...rest } = flags;
  const message: Record<string, unknown> = {};
  for (const field of SEND_FIELDS) {
    if (field !== 'templateVariables' && rest[field] !== undefined) message[field] = rest[field];
  }
  if (templateVariables !== undefined) message.templateVariables = parseJsonObject('--template-variables', templateVariables);
  return message as Partial<NotificationParams>;
}

/** Refuses (exit 2) a notification the gateway would refuse, before anything is sent. */
export function requireValidNotification(value: Record<string, unknown>): NotificationParams {
  const problems = notificationProblems(value).map((problem) => problem.replace(/^(\w+) is required$/, (_m, field: string) => `${field} is required (--${kebab(field)})`));
  if (problems.length > 0) throw usageError(`Invalid notification: ${problems.join('; ')}`);
  return value as unknown as NotificationParams;
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
