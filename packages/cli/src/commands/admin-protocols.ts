import type { AdminProtocol } from '@herald/sdk';
import type { Command } from 'commander';
import type { Output } from '../output.js';
import { usageError } from '../exit-codes.js';
import { integerIn, parseTier, parseTimestamp } from '../parse-options.js';
import { everyItem, shownLine, wholeList, withPaging, type PagingFlags } from '../paging.js';
import { adminClient, type ContextOf } from './admin.js';

const TIER_NAMES = ['Developer', 'Growth', 'Scale', 'Enterprise'];

function showProtocol(out: Output, protocol: AdminProtocol, extra: [string, string][] = []): void {
  out.fields([
    ['id', protocol.id],
    ['name', protocol.name],
    ['tier', `${protocol.tier} (${protocol.tierName})`],
    ['overage', protocol.overageEnabled ? 'on' : 'off'],
    ['expires', protocol.subscriptionExpiresAt],
    ['created', protocol.createdAt],
    ...extra,
  ]);
}

interface ProtocolFlags {
  name?: string;
  tier?: 0 | 1 | 2 | 3;
  overage?: boolean;
  expiresAt?: string;
}

/** `herald admin protocols create | list | get | update`. */
export function registerAdminProtocols(admin: Command, contextOf: ContextOf): void {
  const protocols = admin.command('protocols').description('create, list, show and change protocols (accounts)');

  protocols
    .command('create')
    .description('create a protocol with a live and a sandbox API key (shown once)')
    .requiredOption('--name <name>', 'protocol name')
    .requiredOption('--tier <tier>', `tier: 0-3 or ${TIER_NAMES.join(', ').toLowerCase()}`, parseTier)
    .option('--overage', 'keep sending past the monthly quota instead of refusing with 402')
    .option('--expires-at <timestamp>', 'subscription expiry (ISO 8601; default one year from now)', parseTimestamp)
    .action(async (flags: ProtocolFlags, command: Command) => {
      const { context, admin } = adminClient(command, contextOf);
      const created = await admin.protocols.create({
        name: flags.name!,
        tier: flags.tier!,
        ...(flags.overage ? { overageEnabled: true } : {}),
        ...(flags.expiresAt ? { subscriptionExpiresAt: flags.expiresAt } : {}),
      });
      const { out } = context;
      out.result(created, () => {
        out.line(out.style.green(`Created protocol ${created.name}`));
        showProtocol(out, created, [
          ['live key', created.apiKey],
          ['sandbox key', created.sandboxApiKey],
        ]);
        out.note(out.style.yellow('Store both keys now: they are not shown again.'));
      });
    });

  withPaging(protocols.command('list').description('list protocols, newest first'), 'protocols', 20)
    .action(async (flags: PagingFlags, command: Command) => {
      const { context, admin } = adminClient(command, contextOf);
      const list = flags.all
        ? wholeList(await everyItem(flags, () => admin.protocols.listAll({ limit: flags.limit })))
        : await admin.protocols.list({ page: flags.page, limit: flags.limit });
      const { out } = context;
      out.result(list, () => {
        out.table(
          ['ID', 'NAME', 'TIER', 'OVERAGE', 'EXPIRES'],
          list.data.map((p) => [p.id, p.name, `${p.tier} ${p.tierName}`, p.overageEnabled ? 'on' : 'off', p.subscriptionExpiresAt]),
        );
        out.line(out.style.dim(shownLine(list.page, list.data.length, list.total)));
      });
    });

  protocols
    .command('get')
    .description('show one protocol')
    .argument('<id>', 'protocol id (proto_…)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const { context, admin } = adminClient(command, contextOf);
      const protocol = await admin.protocols.get(id);
      context.out.result(protocol, () => showProtocol(context.out, protocol));
    });

  protocols
    .command('update')
    .description("change a protocol's name, tier, overage or expiry")
    .argument('<id>', 'protocol id (proto_…)')
    .option('--name <name>', 'new name')
    .option('--tier <tier>', 'new tier: 0-3 or a tier name', parseTier)
    .option('--overage', 'allow sends past the monthly quota')
    .option('--no-overage', 'refuse sends past the monthly quota with 402')
    .option('--expires-at <timestamp>', 'new subscription expiry (ISO 8601)', parseTimestamp)
    .action(async (id: string, flags: ProtocolFlags, command: Command) => {
      const changes = {
        ...(flags.name !== undefined ? { name: flags.name } : {}),
        ...(flags.tier !== undefined ? { tier: flags.tier } : {}),
        ...(flags.overage !== undefined ? { overageEnabled: flags.overage } : {}),
        ...(flags.expiresAt !== undefined ? { subscriptionExpiresAt: flags.expiresAt } : {}),
      };
      if (Object.keys(changes).length === 0) throw usageError('Nothing to change: give --name, --tier, --overage/--no-overage or --expires-at');
      const { context, admin } = adminClient(command, contextOf);
      const protocol = await admin.protocols.update(id, changes);
      context.out.result(protocol, () => {
        context.out.line(context.out.style.green(`Updated protocol ${protocol.name}`));
        showProtocol(context.out, protocol);
      });
    });
}
