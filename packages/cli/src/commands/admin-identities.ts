import type { Command } from 'commander';
import { usageError } from '../exit-codes.js';
import { adminClient, type ContextOf } from './admin.js';

interface ImportFlags {
  wallet: string;
  email?: string;
  phone?: string;
  telegramChatId?: string;
}

/** `herald admin identities import`. */
export function registerAdminIdentities(admin: Command, contextOf: ContextOf): void {
  const identities = admin.command('identities').description('wallet identities verified elsewhere');
  identities
    .command('import')
    .description('register a wallet with contacts already verified (no codes are sent)')
    .requiredOption('--wallet <address>', 'wallet address')
    .option('--email <address>', 'verified email address')
    .option('--phone <number>', 'verified phone number, E.164 (+14155550123)')
    .option('--telegram-chat-id <id>', 'linked Telegram chat id')
    .action(async (flags: ImportFlags, command: Command) => {
      const { wallet, email, phone, telegramChatId } = flags;
      if (email === undefined && phone === undefined && telegramChatId === undefined) throw usageError('Give at least one of --email, --phone, --telegram-chat-id');
      const { context, admin } = adminClient(command, contextOf);
      const imported = await admin.identities.import({ wallet, email, phone, telegramChatId });
      context.out.result(imported, () => context.out.line(context.out.style.green(`Imported ${imported.wallet}: ${imported.channels.join(', ') || 'no channels'}`)));
    });
}
