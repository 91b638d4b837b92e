import type { Channel, Subscription } from '@herald/sdk';
import type { Command } from 'commander';
import { CHANNELS } from '../notification-input.js';
import { listOf } from '../parse-options.js';
import type { Output } from '../output.js';
import type { ContextOf } from './admin.js';

function showSubscription(out: Output, subscription: Subscription): void {
  out.fields([
    ['wallet', subscription.walletAddress],
    ['subscribed', subscription.subscribed ? out.style.green('yes') : 'no'],
    ['channels', subscription.channels.join(', ') || '-'],
    ['subscribed at', subscription.subscribedAt ?? '-'],
    ['unsubscribed at', subscription.unsubscribedAt ?? '-'],
  ]);
}

/** `herald subscription add | check | remove`. */
export function registerSubscription(program: Command, contextOf: ContextOf): void {
  const subscription = program.command('subscription').description("a registered wallet's subscription to your protocol");

  subscription
    .command('add')
    .description('subscribe a registered wallet (or change its channels)')
    .argument('<wallet>', 'wallet address')
    .requiredOption('--channels <list>', `comma-separated: ${CHANNELS.join(', ')}`, listOf(CHANNELS))
    .action(async (wallet: string, flags: { channels: Channel[] }, command: Command) => {
      const context = contextOf(command);
      const result = await context.herald().subscriptions.subscribe({ walletAddress: wallet, channels: flags.channels });
      context.out.result(result, () => {
        context.out.line(context.out.style.green(`Subscribed ${wallet} on ${result.channels.join(', ')}`));
        showSubscription(context.out, result);
      });
    });

  subscription
    .command('check')
    .description("a wallet's subscription")
    .argument('<wallet>', 'wallet address')
    .action(async (wallet: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const result = await context.herald().subscriptions.get(wallet);
      context.out.result(result, () => showSubscription(context.out, result));
    });

  subscription
    .command('remove')
    .description("unsubscribe a wallet: later sends to it report opted_out")
    .argument('<wallet>', 'wallet address')
    .action(async (wallet: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const result = await context.herald().subscriptions.unsubscribe(wallet);
      context.out.result(result, () => {
        context.out.line(context.out.style.green(`Unsubscribed ${wallet}`));
        showSubscription(context.out, result);
      });
    });
}
