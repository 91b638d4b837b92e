import { HeraldWaitTimeoutError, lastReadOf, type Herald, type Notification, type NotificationParams, type Submission } from '@herald/sdk';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { CliError, EXIT, exitCodeFor, usageError } from '../exit-codes.js';
import { newIdempotencyKey, withRetryKey } from '../idempotency-key.js';
import { readStdinObject } from '../json-input.js';
import { interruption } from '../interruption.js';
import { sendKeyed } from '../keyed-request.js';
import { addMessageOptions, messageFrom, requireValidNotification, type MessageFlags } from '../message-flags.js';
import { parseDuration } from '../parse-options.js';
import type { ContextOf } from './admin.js';
import { showNotification, showSubmission } from './notification-views.js';

interface SendFlags extends MessageFlags {
  idempotencyKey?: string;
  fromStdin?: boolean;
  wait?: boolean;
  waitTimeout?: number;
}

const DEFAULT_WAIT_MS = 60_000;
const POLL_MS = 1000;

/** The notification to send, always with an idempotency key: the user's, or one generated here. */
async function notificationFrom(context: Context, flags: SendFlags): Promise<{ params: NotificationParams; sentWith: SentWith }> {
  const base = flags.fromStdin ? await readStdinObject(context.io.stdin, ' (for an array, use `herald notify batch --from-stdin`)') : {};
  const key = flags.idempotencyKey !== undefined ? { idempotencyKey: flags.idempotencyKey } : {};
  const params = requireValidNotification({ ...base, ...messageFrom(flags), ...key });
  if (params.idempotencyKey !== undefined) return { params, sentWith: { key: params.idempotencyKey, generated: false } };
  const generated = newIdempotencyKey();
  return { params: { ...params, idempotencyKey: generated }, sentWith: { key: generated, generated: true } };
}

/** The idempotency key a send went with, and whether this run generated it. */
interface SentWith {
  key: string;
  generated: boolean;
}

const keyLabel = ({ key, generated }: SentWith) => (generated ? `${key} (generated)` : key);

/** What running the command again with the key does, once the gateway has accepted the send. */
const RESEND_NOTE = 'does not send it twice';

/** A duplicate under a generated key was this run's own retry: the notification went once. */
function noteOwnRetry(context: Context, submission: Submission, sentWith: SentWith): void {
  if (sentWith.generated && submission.status === 'duplicate') {
    context.out.note('The first attempt reached the gateway but its answer was lost; the retry found it, so the notification was sent once.');
  }
}

/** The submission for people, naming the key. */
function reportSubmission(context: Context, submission: Submission, sentWith: SentWith): void {
  const { out } = context;
  out.result(submission, () => showSubmission(out, submission, keyLabel(sentWith)));
  noteOwnRetry(context, submission, sentWith);
}

/** The notification's record for people, with the key the send went with. */
function showRecord(context: Context, notification: Notification, sentWith: SentWith): void {
  showNotification(context.out, notification);
  context.out.fields([['idempotency key', keyLabel(sentWith)]]);
}

/** Prints what the wait ended with; anything but delivered is a failure (exit 1). */
function reportWait(context: Context, submission: Submission, notification: Notification, sentWith: SentWith): void {
  const { out } = context;
  out.result({ submission, notification }, () => {
    if (notification.status === 'delivered') out.line(out.style.green(`Delivered notification ${notification.notification_id} by ${notification.delivery_channel}`));
    showRecord(context, notification, sentWith);
  });
  if (notification.status !== 'delivered') {
    const reason = notification.error ? `: ${notification.error}` : '';
    throw new CliError(EXIT.error, 'NOT_DELIVERED', `Notification ${notification.notification_id} ${notification.status.replace('_', ' ')}${reason}`);
  }
}

/**
 * Waits for the outcome of an accepted send. However the wait ends (a timeout, a failed read,
 * Ctrl-C) the submission still goes to stdout and the error names the key, so a script never
 * takes the message for unsent, nor sends it twice by running the command again.
 */
async function waitAndReport(context: Context, herald: Herald, submission: Submission, timeoutMs: number, sentWith: SentWith): Promise<void> {
  const id = submission.notificationId;
  const { out } = context;
  // Opted out or failed is already the outcome: nothing was queued to wait for.
  if (submission.status === 'queued' || submission.status === 'duplicate') {
    out.note(out.style.dim(`Queued ${id} (${submission.status}) with idempotency key ${keyLabel(sentWith)}; waiting up to ${timeoutMs / 1000} s for delivery…`));
  }
  noteOwnRetry(context, submission, sentWith);
  const retry = { idempotencyKey: sentWith.key, note: RESEND_NOTE };
  interruption.record({
    show: () => out.result({ submission, notification: null }, () => showSubmission(out, submission, keyLabel(sentWith))),
    message: `notification ${id} was accepted (${submission.status}); waiting for its outcome was stopped: check it with \`herald notify status ${id}\``,
    retry,
  });
  let notification: Notification;
  try {
    notification = await herald.notifications.waitForDelivery(id, { timeoutMs, intervalMs: POLL_MS });
  } catch (error) {
    // What is known: the record as last read, or else the submission.
    const last = lastReadOf(error);
    if (last) out.result({ submission, notification: last }, () => showRecord(context, last, sentWith));
    else out.result({ submission, notification: null }, () => showSubmission(out, submission, keyLabel(sentWith)));
    // Out of time while the reads answered (or were merely slow): the notification is on its way.
    const failure = error instanceof HeraldWaitTimeoutError ? error.cause : error;
    if (failure === undefined) {
      throw withRetryKey(new CliError(EXIT.error, 'WAIT_TIMEOUT', `${(error as Error).message}; check later with \`herald notify status ${id}\``), retry.idempotencyKey, retry.note);
    }
    // The send was accepted; only reading its outcome failed: the rate limit kept refusing the
    // reads until the time ran out, or the network, a revoked key…
    const cause = failure instanceof Error ? failure.message : String(failure);
    const message = `Notification ${id} was accepted (${submission.status}), but waiting for its outcome failed: ${cause}; check later with \`herald notify status ${id}\``;
    throw withRetryKey(new CliError(exitCodeFor(failure), 'WAIT_FAILED', message), retry.idempotencyKey, retry.note);
  } finally {
    interruption.record(undefined);
  }
  reportWait(context, submission, notification, sentWith);
}

/** `herald notify send`: one notification from flags (or stdin), optionally waiting for its outcome. */
export function registerNotifySend(notify: Command, contextOf: ContextOf): void {
  const send = notify.command('send').description('send one notification; with --wait, block until it is delivered, bounced or failed');
  addMessageOptions(send)
    .option('--idempotency-key <key>', 'the same key and payload within 24 h answer duplicate with the first id; default: a new cli_<uuid> per run, so retries are safe')
    .option('--from-stdin', 'read the notification as a JSON object from standard input; flags override its fields')
    .option('--wait', 'wait for the outcome: exit 0 when delivered, 1 when bounced, failed or opted out')
    .option('--wait-timeout <duration>', 'how long --wait waits, e.g. 30s or 2m (default 60s); exit 1 when it runs out', parseDuration)
    .addHelpText(
      'after',
      `
Without --wait the exit code is 0 once the gateway accepted the request, whatever the status
(queued, duplicate, opted_out, failed). With --wait and --json, stdout is {submission, notification}.
Every send carries an idempotency key, so a request whose answer was lost (5xx, timeout) is
retried safely; pass --idempotency-key to make re-running the command safe as well.`,
    )
    .action(async (flags: SendFlags, command: Command) => {
      if (flags.waitTimeout !== undefined && !flags.wait) throw usageError('--wait-timeout needs --wait');
      const context = contextOf(command);
      const { params, sentWith } = await notificationFrom(context, flags);
      const herald = context.herald();
      const submission = await sendKeyed(sentWith.key, RESEND_NOTE, () => herald.notifications.send(params), 'the send');
      if (flags.wait) return waitAndReport(context, herald, submission, flags.waitTimeout ?? DEFAULT_WAIT_MS, sentWith);
      reportSubmission(context, submission, sentWith);
    });
}
