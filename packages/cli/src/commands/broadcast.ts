import type { Broadcast, BroadcastParams } from '@herald/sdk';
import type { Command } from 'commander';
import { usageError } from '../exit-codes.js';
import { CREATE_KEY_HELP } from '../idempotency-key.js';
import { withCreationKey } from '../keyed-request.js';
import { readStdinObject } from '../json-input.js';
import { addMessageOptions, messageFrom, type MessageFlags } from '../message-flags.js';
import type { Output } from '../output.js';
import type { ContextOf } from './admin.js';
import { colourStatus } from './notification-views.js';

function showBroadcast(out: Output, broadcast: Broadcast): void {
  out.fields([
    ['id', broadcast.broadcast_id],
    ['subject', broadcast.subject],
    ['category', broadcast.category],
    ['environment', broadcast.environment],
    ['created', broadcast.created_at],
    ['subscribers', String(broadcast.total_subscribers)],
    ['queued', String(broadcast.queued_count)],
    ...(broadcast.template_id ? [['template', `${broadcast.template_id} v${broadcast.template_version}`] as [string, string]] : []),
  ]);
  out.line();
  out.table(
    ['STATUS', 'COUNT'],
    Object.entries(broadcast.counts).map(([status, count]) => [colourStatus(out, status), String(count)]),
  );
}

/** `herald broadcast` (send to every subscriber) and `herald broadcast status <id>`; Growth tier and above. */
export function registerBroadcast(program: Command, contextOf: ContextOf): void {
  const broadcast = program
    .command('broadcast')
    .description('send one message to every active subscriber (Growth tier and above); `broadcast status <id>` follows one');
  addMessageOptions(broadcast, ['subject', 'body', 'category', 'receipt', 'templateId', 'templateVariables'])
    .option('--from-stdin', 'read the message as a JSON object from standard input; flags override its fields')
    .option('--idempotency-key <key>', CREATE_KEY_HELP)
    .action(async (flags: MessageFlags & { fromStdin?: boolean; idempotencyKey?: string }, command: Command) => {
      const context = contextOf(command);
      const { fromStdin, idempotencyKey, ...fields } = flags;
      // A key in the stdin object is the request's Idempotency-Key (a broadcast's body has none); the flag wins.
      const { idempotencyKey: stdinKey, ...stdin } = fromStdin ? await readStdinObject(context.io.stdin) : {};
      if (stdinKey !== undefined && typeof stdinKey !== 'string') throw usageError('idempotencyKey in the stdin object must be a string');
      const params = { ...stdin, ...messageFrom(fields) } as BroadcastParams;
      const missing = (['subject', 'body', 'category'] as const).filter((field) => params[field] === undefined);
      if (missing.length > 0) throw usageError(`Missing ${missing.map((field) => `--${field}`).join(', ')}`);
      const herald = context.herald();
      const accepted = await withCreationKey(idempotencyKey ?? stdinKey, (key) => herald.broadcasts.send(params, { idempotencyKey: key }));
      const { out } = context;
      out.result(accepted, () => {
        out.line(out.style.green(`Broadcast ${accepted.broadcast_id}: ${accepted.queued_count} of ${accepted.total_subscribers} subscribers queued`));
        out.line(out.style.dim(`Estimated delivery in ${accepted.estimated_delivery_s} s; follow it with \`herald broadcast status ${accepted.broadcast_id}\``));
      });
    });

  broadcast
    .command('status')
    .description("a broadcast and its notifications' counts by status")
    // The message options belong to `broadcast` itself, not to this command: its help lists only the program's.
    .configureHelp({ showGlobalOptions: true, visibleGlobalOptions: (command) => command.parent!.parent!.options.filter((option) => !option.hidden) })
    .argument('<id>', 'broadcast id (bcast_…)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const record = await context.herald().broadcasts.get(id);
      context.out.result(record, () => showBroadcast(context.out, record));
    });
}
