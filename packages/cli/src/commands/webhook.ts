import type { EventType, UpdateWebhookParams, Webhook } from '@herald/sdk';
import type { Command } from 'commander';
import { cancelled, CliError, EXIT, usageError } from '../exit-codes.js';
import { CREATE_KEY_HELP } from '../idempotency-key.js';
import { withCreationKey } from '../keyed-request.js';
import { integerIn, listOf } from '../parse-options.js';
import { everyItem, shownLine, wholeList, withPaging, type PagingFlags } from '../paging.js';
import type { Output } from '../output.js';
import { canPrompt, confirm } from '../prompt.js';
import type { ContextOf } from './admin.js';

export const EVENT_TYPES: EventType[] = ['notification.delivered', 'notification.bounced', 'notification.failed', 'receipt.confirmed', 'quota.exceeded'];
const parseEvents = listOf(EVENT_TYPES);

/** An endpoint's fields, `more` below them, aligned as one block. */
function showWebhook(out: Output, hook: Webhook, more: [string, string][] = []): void {
  out.fields([['id', hook.id], ['url', hook.url], ['events', hook.events.join(', ')], ['active', hook.isActive ? 'yes' : out.style.red('no')], ...more]);
}

/** `herald webhook list | get | create | update | rotate-secret | delete | test | deliveries | retry`. */
export function registerWebhook(program: Command, contextOf: ContextOf): void {
  const webhook = program.command('webhook').description('endpoints that receive signed delivery, receipt and quota events');

  webhook
    .command('list')
    .description("your protocol's endpoints (secrets are never shown)")
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command);
      const hooks = await context.herald().webhooks.list();
      const { out } = context;
      out.result(hooks, () => {
        out.table(
          ['ID', 'ACTIVE', 'URL', 'EVENTS'],
          hooks.map((h) => [h.id, h.isActive ? 'yes' : out.style.red('no'), h.url, h.events.join(',')]),
        );
      });
    });

  webhook
    .command('get')
    .description('one endpoint, with its dates and why it is inactive (never the secret)')
    .argument('<id>', 'webhook id (wh_…)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const hook = await context.herald().webhooks.get(id);
      const { out } = context;
      out.result(hook, () =>
        showWebhook(out, hook, [
          ['created', hook.createdAt],
          ['updated', hook.updatedAt],
          ...(hook.disabledReason ? [['disabled', hook.disabledReason] as [string, string]] : []),
          ...(hook.previousSecretExpiresAt ? [['old secret valid until', hook.previousSecretExpiresAt] as [string, string]] : []),
        ]),
      );
    });

  webhook
    .command('rotate-secret')
    .description('give an endpoint a new signing secret, shown once; the old one stays valid for a while (default 24 h)')
    .argument('<id>', 'webhook id (wh_…)')
    .option('--keep-previous <seconds>', 'how long the old secret stays valid, 0-604800 (default 86400); requests are signed with both until then', integerIn(0, 604_800))
    .option('--idempotency-key <key>', CREATE_KEY_HELP)
    .action(async (id: string, flags: { keepPrevious?: number; idempotencyKey?: string }, command: Command) => {
      const context = contextOf(command);
      const params = flags.keepPrevious !== undefined ? { previousSecretExpiresInSeconds: flags.keepPrevious } : {};
      const rotated = await withCreationKey(
        flags.idempotencyKey,
        (key) => context.herald().webhooks.rotateSecret(id, params, { idempotencyKey: key }),
        'does not rotate it twice',
      );
      const { out } = context;
      out.result(rotated, () => {
        out.line(out.style.green(`New secret for webhook ${rotated.id}`));
        out.fields([
          ['secret', rotated.secret],
          ['old secret valid until', rotated.previousSecretExpiresAt ?? 'no longer valid'],
        ]);
        out.note(out.style.yellow('Store the secret now: it is not shown again. Until the old one expires, requests carry a signature for each.'));
      });
    });

  webhook
    .command('create')
    .description('register an endpoint; its signing secret is shown once')
    .requiredOption('--url <url>', 'receiver URL (http or https)')
    .option('--events <list>', `comma-separated event types (default all): ${EVENT_TYPES.join(', ')}`, parseEvents)
    .option('--idempotency-key <key>', CREATE_KEY_HELP)
    .action(async (flags: { url: string; events?: EventType[]; idempotencyKey?: string }, command: Command) => {
      const context = contextOf(command);
      const params = { url: flags.url, events: flags.events ?? EVENT_TYPES };
      const created = await withCreationKey(flags.idempotencyKey, (key) => context.herald().webhooks.create(params, { idempotencyKey: key }));
      const { out } = context;
      out.result(created, () => {
        out.line(out.style.green(`Created webhook ${created.id}`));
        showWebhook(out, created);
        out.fields([['secret', created.secret]]);
        out.note(out.style.yellow('Store the secret now: it is not shown again. Verify requests with verifyWebhookSignature.'));
      });
    });

  webhook
    .command('update')
    .description("change an endpoint's url, events or active flag")
    .argument('<id>', 'webhook id (wh_…)')
    .option('--url <url>', 'new receiver URL')
    .option('--events <list>', 'new comma-separated event types', parseEvents)
    .option('--active', 'turn the endpoint on (clears its failure streak)')
    .option('--no-active', 'turn the endpoint off')
    .action(async (id: string, flags: { url?: string; events?: EventType[]; active?: boolean }, command: Command) => {
      const changes: UpdateWebhookParams = {
        ...(flags.url !== undefined ? { url: flags.url } : {}),
        ...(flags.events !== undefined ? { events: flags.events } : {}),
        ...(flags.active !== undefined ? { isActive: flags.active } : {}),
      };
      if (Object.keys(changes).length === 0) throw usageError('Nothing to change: give --url, --events, --active or --no-active');
      const context = contextOf(command);
      const hook = await context.herald().webhooks.update(id, changes);
      context.out.result(hook, () => {
        context.out.line(context.out.style.green(`Updated webhook ${hook.id}`));
        showWebhook(context.out, hook);
      });
    });

  webhook
    .command('delete')
    .description('delete an endpoint and its delivery log')
    .argument('<id>', 'webhook id (wh_…)')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (id: string, flags: { yes?: boolean }, command: Command) => {
      const context = contextOf(command);
      if (!flags.yes) {
        if (!canPrompt(context.io, context.json)) throw usageError('Deleting needs confirmation: pass --yes');
        if (!(await confirm(context.io, `Delete webhook ${id} and its delivery log?`))) throw cancelled();
      }
      await context.herald().webhooks.delete(id);
      context.out.result({ deleted: true, id }, () => context.out.line(context.out.style.green(`Deleted webhook ${id}`)));
    });

  webhook
    .command('test')
    .description('send a signed synthetic notification.delivered to the endpoint now; exit 1 unless it answers 2xx')
    .argument('<id>', 'webhook id (wh_…)')
    .action(async (id: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const result = await context.herald().webhooks.test(id);
      const { out } = context;
      out.result(result, () => out.line(result.sent ? out.style.green(`The endpoint answered 2xx`) : out.style.red('The endpoint did not answer 2xx')));
      if (!result.sent) throw new CliError(EXIT.error, 'WEBHOOK_TEST_FAILED', `Webhook ${id} did not answer the test event with 2xx: see \`herald webhook deliveries ${id}\``);
    });

  withPaging(webhook.command('deliveries').description("an endpoint's deliveries, newest first, with their attempts").argument('<id>', 'webhook id (wh_…)'), 'deliveries', 20)
    .action(async (id: string, flags: PagingFlags, command: Command) => {
      const context = contextOf(command);
      const herald = context.herald();
      const page = flags.all
        ? wholeList(await everyItem(flags, () => herald.webhooks.listAllDeliveries(id, { limit: flags.limit })))
        : await herald.webhooks.deliveries(id, { page: flags.page, limit: flags.limit });
      const { out } = context;
      out.result(page, () => {
        const paint = (status: string) => (status === 'succeeded' ? out.style.green : status === 'failed' ? out.style.red : out.style.yellow)(status);
        out.table(
          ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST', 'CREATED'],
          page.data.map((d) => [d.id, d.eventType, paint(d.status), String(d.attempts.length), d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '-'), d.createdAt]),
        );
        out.line(out.style.dim(shownLine(page.page, page.data.length, page.total)));
      });
    });

  webhook
    .command('retry')
    .description('queue a delivery again, due now')
    .argument('<id>', 'webhook id (wh_…)')
    .argument('<deliveryId>', 'delivery id')
    .action(async (id: string, deliveryId: string, _flags: unknown, command: Command) => {
      const context = contextOf(command);
      const delivery = await context.herald().webhooks.retryDelivery(id, deliveryId);
      context.out.result(delivery, () => context.out.line(context.out.style.green(`Queued delivery ${delivery.id} again (${delivery.eventType})`)));
    });
}
