import type { Channel } from '@herald/sdk';
import { Option, type Command } from 'commander';
import { CHANNELS } from '../notification-input.js';
import { integerIn } from '../parse-options.js';
import type { ContextOf } from './admin.js';

/** `herald sandbox messages`: what the capture provider kept. */
export function registerSandbox(program: Command, contextOf: ContextOf): void {
  const sandbox = program.command('sandbox').description('messages stored instead of sent (sandbox keys, channels without a provider)');
  sandbox
    .command('messages')
    .description('captured messages, newest first')
    .option('--wallet <address>', 'only messages to this wallet')
    .addOption(new Option('--channel <channel>', 'only this channel').choices(CHANNELS))
    .option('--page <n>', 'page, from 1', integerIn(1, 1_000_000))
    .option('--limit <n>', 'messages per page, 1-100 (default 20)', integerIn(1, 100))
    .action(async (flags: { wallet?: string; channel?: Channel; page?: number; limit?: number }, command: Command) => {
      const context = contextOf(command);
      const page = await context.herald().sandbox.messages(flags);
      const { out } = context;
      out.result(page, () => {
        for (const message of page.data) {
          out.line(out.style.bold(`${message.createdAt}  ${message.channel}  ${message.wallet}  ${message.notificationId ?? ''}`.trimEnd()));
          if (message.subject) out.line(`Subject: ${message.subject}`);
          out.line(message.text);
          out.line();
        }
        out.line(out.style.dim(`page ${page.page}, ${page.data.length} shown of ${page.total}`));
      });
    });
}
