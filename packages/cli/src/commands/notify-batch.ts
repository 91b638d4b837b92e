import { HeraldApiError, HeraldNetworkError, type BulkSubmission, type Herald, type NotificationParams } from '@herald/sdk';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { cancelled, usageError } from '../exit-codes.js';
import { newIdempotencyKey, withRetryKey } from '../idempotency-key.js';
import { readJsonInput } from '../json-input.js';
import { notificationProblems } from '../notification-input.js';
import { ProgressBar } from '../progress-bar.js';
import { canPrompt, confirm } from '../prompt.js';
import type { ContextOf } from './admin.js';
import { colourStatus } from './notification-views.js';

/** The gateway's bulk limit. */
export const BULK_SIZE = 100;
const SHOWN = 20;

interface BatchFlags {
  file?: string;
  fromStdin?: boolean;
  yes?: boolean;
  idempotencyKey?: string;
  dryRun?: boolean;
}

/** One line of the --json output per input item, in input order. */
export type ItemResult =
  | ({ index: number } & BulkSubmission)
  | { index: number; status: 'error'; error: { code: string; message: string; statusCode?: number } }
  | { index: number; status: 'not_sent' };

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
const requestsFor = (count: number) => Math.ceil(count / BULK_SIZE);
const walletsIn = (items: NotificationParams[]) => new Set(items.map((item) => item.wallet)).size;

async function readBatch(context: Context, flags: BatchFlags): Promise<NotificationParams[]> {
  if ((flags.file === undefined) === !flags.fromStdin) throw usageError('Give the notifications with --file <path> or --from-stdin (one of the two)');
  const input = await readJsonInput(flags.fromStdin ? { stdin: context.io.stdin } : { file: flags.file });
  if (!Array.isArray(input)) throw usageError('The batch must be a JSON array of notification objects');
  if (input.length === 0) throw usageError('The batch is empty: nothing to send');
  const keyed = flags.idempotencyKey === undefined ? input : input.map((item, i) => (isObject(item) ? { ...item, idempotencyKey: `${flags.idempotencyKey}-${i}` } : item));
  const problems = keyed.flatMap((item, i) => notificationProblems(item).map((problem) => `item ${i}: ${problem}`));
  if (problems.length > 0) {
    const more = problems.length > SHOWN ? `\n  … and ${problems.length - SHOWN} more` : '';
    throw usageError(`The batch has ${plural(problems.length, 'problem')}; nothing was sent:\n  ${problems.slice(0, SHOWN).join('\n  ')}${more}`);
  }
  return keyed as NotificationParams[];
}

/**
 * Gives every item without a key `<runKey>-<i>`, as --idempotency-key would. The gateway
 * deduplicates per item, so once every item is keyed the SDK may retry a bulk request whose answer
 * was lost: what was stored answers duplicate, and nothing is sent twice.
 */
function keyEveryItem(items: NotificationParams[], runKey: string): NotificationParams[] {
  return items.map((item, i) => (item.idempotencyKey === undefined ? { ...item, idempotencyKey: `${runKey}-${i}` } : item));
}

function describeError(error: unknown): { code: string; message: string; statusCode?: number } {
  if (error instanceof HeraldApiError) return { code: error.code, message: error.message, statusCode: error.statusCode };
  if (error instanceof HeraldNetworkError) return { code: `NETWORK_${error.kind.toUpperCase()}`, message: error.message };
  return { code: 'ERROR', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Sends the items in bulk calls of BULK_SIZE, one after another, stopping at the first refused
 * call (each is all-or-nothing, so every item is either sent or clearly not).
 */
async function sendInChunks(herald: Herald, items: NotificationParams[], progress: ProgressBar) {
  const results: ItemResult[] = [];
  let failure: { error: unknown; request: number } | undefined;
  for (let start = 0; start < items.length; start += BULK_SIZE) {
    const chunk = items.slice(start, start + BULK_SIZE);
    if (failure) {
      chunk.forEach((_, i) => results.push({ index: start + i, status: 'not_sent' }));
      continue;
    }
    try {
      const { results: sent } = await herald.notifications.sendBulk(chunk);
      sent.forEach((result, i) => results.push({ index: start + i, ...result }));
    } catch (error) {
      failure = { error, request: start / BULK_SIZE + 1 };
      const described = describeError(error);
      chunk.forEach((_, i) => results.push({ index: start + i, status: 'error', error: described }));
    }
    progress.update(Math.min(start + BULK_SIZE, items.length));
  }
  progress.finish();
  return { results, failure };
}

function showDryRun(context: Context, items: NotificationParams[]): void {
  const { out } = context;
  const plan = { dryRun: true, count: items.length, requests: requestsFor(items.length), notifications: items };
  out.result(plan, () => {
    out.line(`Dry run: ${plural(items.length, 'valid notification')} to ${plural(walletsIn(items), 'wallet')} would go in ${plural(plan.requests, 'request')}; nothing was sent`);
    out.table(
      ['INDEX', 'WALLET', 'CATEGORY', 'IDEMPOTENCY KEY', 'SUBJECT'],
      items.slice(0, SHOWN).map((item, i) => [String(i), item.wallet, item.category, item.idempotencyKey ?? 'generated', item.subject]),
    );
    if (items.length > SHOWN) out.line(out.style.dim(`… and ${items.length - SHOWN} more`));
  });
}

function showResults(context: Context, items: NotificationParams[], results: ItemResult[]): void {
  const { out } = context;
  out.result(results, () => {
    const counts = new Map<string, number>();
    for (const result of results) counts.set(result.status, (counts.get(result.status) ?? 0) + 1);
    const summary = [...counts].map(([status, count]) => `${count} ${colourStatus(out, status)}`).join(', ');
    out.line(`${plural(items.length, 'notification')} in ${plural(requestsFor(items.length), 'request')}: ${summary}`);
    const notable = results.filter((r) => r.status !== 'queued' && r.status !== 'duplicate');
    if (notable.length === 0) return;
    out.table(
      ['INDEX', 'STATUS', 'WALLET', 'ID'],
      notable.slice(0, SHOWN).map((r) => [String(r.index), colourStatus(out, r.status), items[r.index].wallet, 'notificationId' in r ? r.notificationId : '-']),
    );
    if (notable.length > SHOWN) out.line(out.style.dim(`… and ${notable.length - SHOWN} more (see --json)`));
  });
}

async function confirmSend(context: Context, items: NotificationParams[]): Promise<void> {
  if (!canPrompt(context.io, context.json)) {
    throw usageError('Sending a batch needs confirmation: pass --yes (no prompt is possible: not a terminal, --json, or the batch is on standard input)');
  }
  const question = `Send ${plural(items.length, 'notification')} to ${plural(walletsIn(items), 'wallet')} in ${plural(requestsFor(items.length), 'request')}?`;
  if (!(await confirm(context.io, question))) throw cancelled();
}

/** `herald notify batch`: a JSON array of notifications, sent in bulk calls of 100. */
export function registerNotifyBatch(notify: Command, contextOf: ContextOf): void {
  notify
    .command('batch')
    .description('send a JSON array of notification objects, in bulk requests of 100')
    .option('--file <path>', 'read the array from this file')
    .option('--from-stdin', 'read the array from standard input')
    .option('-y, --yes', 'send without asking (required when there is no terminal to ask on)')
    .option('--idempotency-key <key>', 'item i gets the key <key>-<i> (from 0), so a re-run answers duplicate instead of sending again; default: items without a key get cli_<uuid>-<i>, new on every run')
    .option('--dry-run', 'check every item and show what would be sent; send nothing')
    .addHelpText(
      'after',
      `
Every item is checked before anything is sent. A refused request stops the batch: its items and
the later ones are reported as error and not_sent. With --json, stdout is one result per item,
in input order: {index, notificationId, status, …} | {index, status: "error", error} | {index, status: "not_sent"}.`,
    )
    .action(async (flags: BatchFlags, command: Command) => {
      const context = contextOf(command);
      if (flags.idempotencyKey !== undefined && flags.idempotencyKey.length === 0) throw usageError('--idempotency-key must not be empty');
      const items = await readBatch(context, flags);
      if (flags.dryRun) return showDryRun(context, items);
      const herald = context.herald();
      if (!flags.yes) await confirmSend(context, items);
      const runKey = newIdempotencyKey();
      const progress = new ProgressBar(context.io.stderr, items.length, 'Sending', !context.json);
      const { results, failure } = await sendInChunks(herald, keyEveryItem(items, runKey), progress);
      showResults(context, items, results);
      if (failure) {
        const sent = (failure.request - 1) * BULK_SIZE;
        context.out.note(`Request ${failure.request} of ${requestsFor(items.length)} was refused: items ${sent} to ${items.length - 1} were not sent.`);
        // The flag would replace keys given in the file, so it repeats this run only when there were none.
        const retryKey = flags.idempotencyKey ?? (items.every((item) => item.idempotencyKey === undefined) ? runKey : undefined);
        if (flags.idempotencyKey !== undefined) context.out.note('Re-running with the same --idempotency-key sends only what is missing.');
        else if (retryKey) context.out.note(`Re-running with --idempotency-key ${retryKey} sends only what is missing.`);
        // Notes are for people; with --json the error itself names the key to run again with.
        throw context.json && retryKey ? withRetryKey(failure.error, retryKey) : failure.error;
      }
    });
}
