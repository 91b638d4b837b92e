import type { CapturedMessage, Channel } from '@herald/sdk';
import { Option, type Command } from 'commander';
import { CHANNELS } from '../notification-input.js';
import type { Output } from '../output.js';
import { everyItem, shownLine, wholeList, withPaging, type PagingFlags } from '../paging.js';
import { adminClient, type ContextOf } from './admin.js';

interface MessageFlags extends PagingFlags {
  wallet?: string;
  channel?: Channel;
}

/** The filters both message lists take. */
function withMessageFilters(command: Command): Command {
  return withPaging(
    command.option('--wallet <address>', 'only messages to this wallet').addOption(new Option('--channel <channel>', 'only this channel').choices(CHANNELS)),
    'messages',
    20,
  );
}

function showMessages(out: Output, page: { data: (CapturedMessage & { protocolId?: string })[]; total: number; page?: number }): void {
  out.result(page, () => {
    for (const message of page.data) {
      out.line(out.style.bold(`${message.createdAt}  ${message.protocolId ?? ''}  ${message.channel}  ${message.wallet}  ${message.notificationId ?? ''}`.replace(/ {2,}/g, '  ').trimEnd()));
      if (message.subject) out.line(`Subject: ${message.subject}`);
      out.line(message.text);
      out.line();
    }
    out.line(out.style.dim(shownLine(page.page, page.data.length, page.total)));
  });
}

/** `herald sandbox messages`: what the capture provider kept. */
export function registerSandbox(program: Command, contextOf: ContextOf): void {
  const sandbox = program.command('sandbox').description('messages stored instead of sent (sandbox keys, channels without a provider)');
  withMessageFilters(sandbox.command('messages').description('captured messages, newest first')).action(async (flags: MessageFlags, command: Command) => {
    const context = contextOf(command);
    const herald = context.herald();
    const { all, ...query } = flags;
    showMessages(context.out, all ? wholeList(await everyItem(flags, () => herald.sandbox.listAllMessages(query))) : await herald.sandbox.messages(query));
  });
}

/** `herald admin sandbox messages`: every captured message, the gateway's verification codes included. */
export function registerAdminSandbox(admin: Command, contextOf: ContextOf): void {
  const sandbox = admin.command('sandbox').description('messages stored instead of sent, of every protocol and the gateway itself');
  withMessageFilters(sandbox.command('messages').description('captured messages, newest first; --protocol-id herald for verification codes'))
    .option('--protocol-id <id>', 'only this protocol\'s; "herald" for the gateway\'s own (verification codes, bot replies)')
    .action(async (flags: MessageFlags & { protocolId?: string }, command: Command) => {
      const { context, admin: client } = adminClient(command, contextOf);
      const { all, ...query } = flags;
      showMessages(context.out, all ? wholeList(await everyItem(flags, () => client.sandbox.listAllMessages(query))) : await client.sandbox.messages(query));
    });
}
