import { Option, type Command } from 'commander';
import type { KeyEnvironment } from '@herald/sdk';
import { cancelled, usageError } from '../exit-codes.js';
import { canPrompt, confirm } from '../prompt.js';
import { adminClient, type ContextOf } from './admin.js';

/** `herald admin keys create | list | revoke`. */
export function registerAdminKeys(admin: Command, contextOf: ContextOf): void {
  const keys = admin.command('keys').description("issue, list and revoke a protocol's API keys");

  keys
    .command('list')
    .description("a protocol's keys (prefixes only), revoked ones included")
    .argument('<protocolId>', 'protocol id (proto_…)')
    .action(async (protocolId: string, _flags: unknown, command: Command) => {
      const { context, admin } = adminClient(command, contextOf);
      const list = await admin.keys.list(protocolId);
      const { out } = context;
      out.result(list, () =>
        out.table(
          ['ID', 'PREFIX', 'ENVIRONMENT', 'CREATED', 'REVOKED'],
          list.data.map((k) => [k.id, k.prefix, k.environment, k.createdAt, k.revokedAt ?? '-']),
        ),
      );
    });

  keys
    .command('create')
    .description('issue another key for a protocol (shown once)')
    .argument('<protocolId>', 'protocol id (proto_…)')
    .addOption(new Option('--environment <environment>', 'production (hrld_live_) or sandbox (hrld_test_)').choices(['production', 'sandbox']).default('production'))
    .action(async (protocolId: string, flags: { environment: KeyEnvironment }, command: Command) => {
      const { context, admin } = adminClient(command, contextOf);
      const key = await admin.keys.create(protocolId, { environment: flags.environment });
      const { out } = context;
      out.result(key, () => {
        out.line(out.style.green(`Issued a ${key.environment} key ${key.id}`));
        out.fields([
          ['key', key.apiKey],
          ['prefix', key.prefix],
        ]);
        out.note(out.style.yellow('Store the key now: it is not shown again.'));
      });
    });

  keys
    .command('revoke')
    .description('revoke a key: it answers 401 from then on')
    .argument('<protocolId>', 'protocol id (proto_…)')
    .argument('<keyId>', 'key id (key_…)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (protocolId: string, keyId: string, flags: { yes?: boolean }, command: Command) => {
      const { context, admin } = adminClient(command, contextOf);
      if (!flags.yes) {
        if (!canPrompt(context.io, context.json)) throw usageError('Revoking needs confirmation: pass --yes');
        if (!(await confirm(context.io, `Revoke key ${keyId} of ${protocolId}? Clients using it stop working.`))) throw cancelled();
      }
      const key = await admin.keys.revoke(protocolId, keyId);
      context.out.result(key, () => context.out.line(context.out.style.green(`Revoked key ${key.id} (${key.prefix}) at ${key.revokedAt}`)));
    });
}
