import type { Command } from 'commander';
import type { ContextOf } from './admin.js';

/** `herald wallet status <wallet>`. */
export function registerWallet(program: Command, contextOf: ContextOf): void {
  const wallet = program.command('wallet').description('wallets as your protocol sees them');
  wallet
    .command('status')
    .description('whether a wallet is registered, and its verified channels (never the contacts)')
    .argument('<wallet>', 'wallet address')
    .action(async (address: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const status = await context.herald().wallets.status(address);
      const { out } = context;
      out.result(status, () =>
        out.fields([
          ['wallet', address],
          ['registered', status.registered ? out.style.green('yes') : out.style.red('no')],
          ['channels', status.channels.join(', ') || '-'],
        ]),
      );
    });
}
