import type { NotificationStatus, PreviewParams } from '@herald/sdk';
import { Option, type Command } from 'commander';
import { readStdinObject } from '../json-input.js';
import { addMessageOptions, messageFrom, type MessageFlags } from '../message-flags.js';
import { usageError } from '../exit-codes.js';
import { everyItem, shownLine, wholeList, withPaging, type PagingFlags } from '../paging.js';
import type { ContextOf } from './admin.js';
import { colourStatus, showNotification } from './notification-views.js';
import { registerNotifyBatch } from './notify-batch.js';
import { registerNotifySend } from './notify-send.js';

const STATUSES: NotificationStatus[] = ['queued', 'sending', 'delivered', 'bounced', 'failed', 'opted_out'];

/** `herald notify send | batch | status | list | preview`. */
export function registerNotify(program: Command, contextOf: ContextOf): void {
  const notify = program.command('notify').description('send notifications and follow them');
  registerNotifySend(notify, contextOf);
  registerNotifyBatch(notify, contextOf);

  notify
    .command('status')
    .description("one notification's status record, with every delivery attempt")
    .argument('<id>', 'notification id')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const record = await context.herald().notifications.get(id);
      context.out.result(record, () => showNotification(context.out, record));
    });

  withPaging(notify.command('list').description("your protocol's notifications, newest first"), 'notifications', 20)
    .addOption(new Option('--status <status>', 'only this status').choices(STATUSES))
    .option('--wallet <address>', 'only notifications to this wallet')
    .action(async (flags: PagingFlags & { status?: NotificationStatus; wallet?: string }, command: Command) => {
      const context = contextOf(command);
      const { all, ...query } = flags;
      const herald = context.herald();
      const list = all ? wholeList(await everyItem(flags, () => herald.notifications.listAll(query))) : await herald.notifications.list(query);
      const { out } = context;
      out.result(list, () => {
        out.table(
          ['ID', 'STATUS', 'CHANNEL', 'RECEIPT', 'CREATED', 'WALLET', 'SUBJECT'],
          list.data.map((n) => [n.notification_id, colourStatus(out, n.status), n.delivery_channel ?? '-', n.receipt_status, n.created_at, n.wallet, n.subject]),
        );
        out.line(out.style.dim(shownLine(list.page, list.data.length, list.total)));
      });
    });

  const preview = notify.command('preview').description('render a notification for email, Telegram and SMS without sending it');
  addMessageOptions(preview, ['wallet', 'subject', 'body', 'category', 'templateId', 'templateVariables'])
    .option('--from-stdin', 'read the notification as a JSON object from standard input; flags override its fields')
    .option('--html', 'print only the rendered email HTML')
    .action(async (flags: MessageFlags & { fromStdin?: boolean; html?: boolean }, command: Command) => {
      const context = contextOf(command);
      const base = flags.fromStdin ? await readStdinObject(context.io.stdin) : {};
      const { fromStdin: _stdin, html: _html, ...fields } = flags;
      const params = { ...base, ...messageFrom(fields) } as PreviewParams;
      for (const field of ['wallet', 'subject', 'body', 'category'] as const) {
        if (params[field] === undefined) throw usageError(`${field} is required (--${field})`);
      }
      const rendered = await context.herald().notifications.preview(params);
      const { out } = context;
      if (flags.html && !out.json) return void out.line(rendered.renderedHtml);
      out.result(rendered, () => {
        out.line(out.style.bold(`Subject: ${rendered.subject}`));
        out.line();
        out.line(out.style.bold('Telegram'));
        out.line(rendered.telegramText);
        out.line();
        out.line(out.style.bold(`SMS (${rendered.sms.encoding}, ${rendered.sms.characters} characters, ${rendered.sms.segments} segment${rendered.sms.segments === 1 ? '' : 's'})`));
        out.line(rendered.smsText);
        out.line();
        out.line(out.style.dim(`Email HTML: ${Buffer.byteLength(rendered.renderedHtml)} bytes (print it with --html)`));
      });
    });
}
