import type { Command } from 'commander';
import type { ContextOf } from './admin.js';

/** `herald usage`: this month's quota. */
export function registerUsage(program: Command, contextOf: ContextOf): void {
  program
    .command('usage')
    .description('sends used and left this calendar month (UTC)')
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command);
      const usage = await context.herald().account.getUsage();
      const { out } = context;
      out.result(usage, () => {
        const left = usage.remaining === 0 && !usage.overageEnabled ? out.style.red('0 (sends answer 402)') : usage.remaining.toLocaleString('en');
        out.fields([
          ['tier', usage.tier],
          ['used', usage.usage.toLocaleString('en')],
          ['remaining', left],
          ['overage', usage.overageEnabled ? 'on' : 'off'],
          ['resets at', usage.resetsAt],
        ]);
      });
    });
}
