import { HeraldApiError, HeraldNetworkError, type BulkSubmission, type Herald, type NotificationParams } from '@herald/sdk';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { cancelled, usageError } from '../exit-codes.js';
import { newIdempotencyKey, outcomeUnknown, withRetryKey } from '../idempotency-key.js';
import { readJsonInput } from '../json-input.js';
import { notificationProblems } from '../notification-input.js';
import { interruption } from '../interruption.js';
import { ProgressBar } from '../progress-bar.js';
import { canPrompt, confirm } from '../prompt.js';
import type { ContextOf } from './admin.js';
import { colourStatus } from './notification-views.js';

/** The gateway's bulk limit. */
export const BULK_SIZE = 100;
/**
 * The most a bulk request's body holds here: the gateway's default body limit (HERALD_BODY_LIMIT,
 * 1 MiB). A gateway set lower answers 413, and the request is then sent again in halves.
 */
export const BULK_BYTES = 1_048_576;
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

/** Items `start` to `start + count - 1` of the batch, sent in one bulk request. */
interface Chunk {
  start: number;
  count: number;
}

/** `{"notifications":[` and `]}` around the items, which are separated by commas. */
const BULK_ENVELOPE_BYTES = '{"notifications":[]}'.length;

/**
 * The bulk requests for the items, in order: at most BULK_SIZE items and BULK_BYTES of JSON each
 * (an item larger than that alone goes on its own, for the gateway to judge).
 */
export function chunksOf(items: NotificationParams[], maxItems = BULK_SIZE, maxBytes = BULK_BYTES): Chunk[] {
  const chunks: Chunk[] = [];
  let current: Chunk | undefined;
  let bytes = 0;
  items.forEach((item, index) => {
    const size = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (!current || current.count === maxItems || bytes + size > maxBytes) {
      current = { start: index, count: 0 };
      chunks.push(current);
      bytes = BULK_ENVELOPE_BYTES;
    }
    current.count++;
    bytes += size;
  });
  return chunks;
}

const tooLarge = (error: unknown) => error instanceof HeraldApiError && error.statusCode === 413;

/** The error of items that were in a request Ctrl-C stopped: stored or not, nobody knows. */
const UNKNOWN = { code: 'CANCELLED', message: 'Cancelled while this request was in flight: these items may have been stored' };

/** What Ctrl-C says: the items sent, and those of the request in flight, which may have been stored. */
function interruptedMessage(sofar: ItemResult[], total: number): string {
  const sent = sofar.filter((r) => r.status !== 'error' && r.status !== 'not_sent').length;
  const inFlight = sofar.filter((r) => r.status === 'error' && r.error === UNKNOWN);
  const maybe = inFlight.length ? `; items ${inFlight[0].index} to ${inFlight[inFlight.length - 1].index}, in flight, may have been stored` : '';
  return `${sent} of ${plural(total, 'item')} were sent${maybe}`;
}

/**
 * Sends the chunks one after another, stopping at the first refused request (each is
 * all-or-nothing, so every item is either sent or clearly not). A request the gateway finds too
 * large (413) goes again as two halves. After every request the results so far are what Ctrl-C
 * reports (`interrupted`).
 */
async function sendInChunks(
  herald: Herald,
  items: NotificationParams[],
  chunks: Chunk[],
  progress: ProgressBar,
  /** The results so far, and the requests sent, the one in flight included. */
  interrupted: (results: ItemResult[], requests: number) => void,
) {
  const results: ItemResult[] = [];
  const queue = [...chunks];
  let requests = 0;
  /** The requests of the whole batch: a request refused as too large is followed by two halves. */
  let planned = chunks.length;
  let failure: { error: unknown; request: number; start: number; count: number } | undefined;
  const rest = (from: number, result: (index: number) => ItemResult) => items.slice(from).map((_, i) => result(from + i));
  while (queue.length > 0) {
    const chunk = queue.shift()!;
    const indices = Array.from({ length: chunk.count }, (_, i) => chunk.start + i);
    requests++;
    const inFlight = indices.map((index): ItemResult => ({ index, status: 'error', error: UNKNOWN }));
    interrupted([...results, ...inFlight, ...rest(chunk.start + chunk.count, (index) => ({ index, status: 'not_sent' }))], requests);
    try {
      const { results: sent } = await herald.notifications.sendBulk(items.slice(chunk.start, chunk.start + chunk.count));
      sent.forEach((result, i) => results.push({ index: chunk.start + i, ...result }));
    } catch (error) {
      if (tooLarge(error) && chunk.count > 1) {
        const half = Math.ceil(chunk.count / 2);
        queue.unshift({ start: chunk.start, count: half }, { start: chunk.start + half, count: chunk.count - half });
        planned += 2;
        continue;
      }
      // The gateway numbers a request's items from 0; the file numbers them from the batch's start.
      if (error instanceof HeraldApiError && chunk.start > 0) {
        error.message = error.message.replace(/notifications\[(\d+)\]/g, (_, i: string) => `notifications[${chunk.start + Number(i)}]`);
      }
      failure = { error, request: requests, start: chunk.start, count: chunk.count };
      const described = describeError(error);
      indices.forEach((index) => results.push({ index, status: 'error', error: described }));
      results.push(...rest(chunk.start + chunk.count, (index) => ({ index, status: 'not_sent' })));
      break;
    }
    progress.update(chunk.start + chunk.count);
  }
  progress.finish();
  return { results, failure, requests, planned };
}

function showDryRun(context: Context, items: NotificationParams[], chunks: Chunk[]): void {
  const { out } = context;
  const plan = { dryRun: true, count: items.length, requests: chunks.length, notifications: items };
  out.result(plan, () => {
    out.line(`Dry run: ${plural(items.length, 'valid notification')} to ${plural(walletsIn(items), 'wallet')} would go in ${plural(plan.requests, 'request')}; nothing was sent`);
    out.table(
      ['INDEX', 'WALLET', 'CATEGORY', 'IDEMPOTENCY KEY', 'SUBJECT'],
      items.slice(0, SHOWN).map((item, i) => [String(i), item.wallet, item.category, item.idempotencyKey ?? 'generated', item.subject]),
    );
    if (items.length > SHOWN) out.line(out.style.dim(`… and ${items.length - SHOWN} more`));
  });
}

function showResults(context: Context, items: NotificationParams[], results: ItemResult[], requests: number): void {
  const { out } = context;
  out.result(results, () => {
    const counts = new Map<string, number>();
    for (const result of results) counts.set(result.status, (counts.get(result.status) ?? 0) + 1);
    const summary = [...counts].map(([status, count]) => `${count} ${colourStatus(out, status)}`).join(', ');
    out.line(`${plural(items.length, 'notification')} in ${plural(requests, 'request')}: ${summary}`);
    const notable = results.filter((r) => r.status !== 'queued' && r.status !== 'duplicate');
    if (notable.length === 0) return;
    out.table(
      ['INDEX', 'STATUS', 'WALLET', 'ID'],
      notable.slice(0, SHOWN).map((r) => [String(r.index), colourStatus(out, r.status), items[r.index].wallet, 'notificationId' in r ? r.notificationId : '-']),
    );
    if (notable.length > SHOWN) out.line(out.style.dim(`… and ${notable.length - SHOWN} more (see --json)`));
  });
}

async function confirmSend(context: Context, items: NotificationParams[], chunks: Chunk[]): Promise<void> {
  if (!canPrompt(context.io, context.json)) {
    throw usageError('Sending a batch needs confirmation: pass --yes (no prompt is possible: not a terminal, --json, or the batch is on standard input)');
  }
  const question = `Send ${plural(items.length, 'notification')} to ${plural(walletsIn(items), 'wallet')} in ${plural(chunks.length, 'request')}?`;
  if (!(await confirm(context.io, question))) throw cancelled();
}

/** `herald notify batch`: a JSON array of notifications, sent in bulk calls of 100. */
export function registerNotifyBatch(notify: Command, contextOf: ContextOf): void {
  notify
    .command('batch')
    .description('send a JSON array of notification objects, in bulk requests of up to 100 (and 1 MiB)')
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
      const runKey = newIdempotencyKey();
      const keyed = keyEveryItem(items, runKey);
      const chunks = chunksOf(keyed);
      if (flags.dryRun) return showDryRun(context, items, chunks);
      const herald = context.herald();
      if (!flags.yes) await confirmSend(context, items, chunks);
      // The flag would replace keys given in the file, so it repeats this run only when there were none.
      const retryKey = flags.idempotencyKey ?? (items.every((item) => item.idempotencyKey === undefined) ? runKey : undefined);
      const progress = new ProgressBar(context.io.stderr, items.length, 'Sending', !context.json);
      const { results, failure, requests, planned } = await sendInChunks(herald, keyed, chunks, progress, (sofar, requests) =>
        interruption.record({
          show: () => showResults(context, items, sofar, requests),
          message: interruptedMessage(sofar, items.length),
          ...(retryKey ? { retry: { idempotencyKey: retryKey } } : {}),
        }),
      ).finally(() => interruption.record(undefined));
      showResults(context, items, results, requests);
      if (failure) {
        const end = failure.start + failure.count - 1;
        if (outcomeUnknown(failure.error)) {
          // No answer, or a 5xx: the gateway may have stored that request's items.
          const later = end < items.length - 1 ? `; items ${end + 1} to ${items.length - 1} were not sent` : '';
          const answer = failure.error instanceof HeraldApiError ? `was answered ${failure.error.statusCode}` : 'got no answer';
          context.out.note(`Request ${failure.request} of ${planned} ${answer}: items ${failure.start} to ${end} may have been stored${later}.`);
        } else {
          context.out.note(`Request ${failure.request} of ${planned} was refused: items ${failure.start} to ${items.length - 1} were not sent.`);
        }
        // A refused request stored nothing, so its keys are unused and a re-run (of a corrected file)
        // sends only what is missing. Not so for an item too large on its own, refused again whatever
        // the key, nor for a key already used with another payload (409), refused again too.
        const rerun = !(failure.error instanceof HeraldApiError && [409, 413].includes(failure.error.statusCode));
        if (rerun && flags.idempotencyKey !== undefined) context.out.note('Re-running with the same --idempotency-key sends only what is missing.');
        else if (rerun && retryKey) context.out.note(`Re-running with --idempotency-key ${retryKey} sends only what is missing.`);
        // Notes are for people; with --json the error itself names the key to run again with.
        throw context.json && rerun && retryKey ? withRetryKey(failure.error, retryKey) : failure.error;
      }
    });
}
