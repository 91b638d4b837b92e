import type { Command } from 'commander';
import type { ContextOf } from './admin.js';

/** `herald protocol info`: the protocol the API key belongs to. */
export function registerProtocol(program: Command, contextOf: ContextOf): void {
  const protocol = program.command('protocol').description('the protocol (account) of your API key');
  protocol
    .command('info')
    .description('name, tier, sends this month and subscription expiry')
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command);
      const info = await context.herald().account.getProtocol();
      const { out } = context;
      out.result(info, () =>
        out.fields([
          ['id', info.id],
          ['name', info.name],
          ['tier', `${info.tier} (${info.tier_name})`],
          ['sends this month', info.sends_this_period],
          ['subscription expires', info.subscription_expires_at],
        ]),
      );
    });
}
