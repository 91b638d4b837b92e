import type { BulkSubmission, Notification, NotificationStatus, Submission } from '@herald/sdk';
import type { Output } from '../output.js';

/** Green for delivered, red for bounced and failed, yellow while in flight. */
export function colourStatus(out: Output, status: string): string {
  const { green, red, yellow, dim } = out.style;
  const paint: Partial<Record<NotificationStatus | 'duplicate', (t: string) => string>> = {
    delivered: green,
    queued: yellow,
    sending: yellow,
    bounced: red,
    failed: red,
    opted_out: dim,
    duplicate: dim,
  };
  return (paint[status as NotificationStatus] ?? ((t: string) => t))(status);
}

const SUBMITTED: Record<string, string> = {
  queued: 'Queued',
  duplicate: 'Duplicate of an earlier send (same idempotency key and payload):',
  opted_out: 'Not sent, the wallet opted out:',
  failed: 'Not sent (the wallet is not registered, or no channel reaches it):',
};

export function showSubmission(out: Output, submission: Submission | BulkSubmission, idempotencyKey?: string): void {
  const headline = `${SUBMITTED[submission.status] ?? submission.status} notification ${submission.notificationId}`;
  out.line(submission.status === 'queued' ? out.style.green(headline) : submission.status === 'failed' ? out.style.red(headline) : headline);
  const rows: [string, string][] = [['status', colourStatus(out, submission.status)]];
  if (submission.deliveryChannel) rows.push(['channel', submission.deliveryChannel]);
  if (submission.estimatedDeliveryMs !== null) rows.push(['estimated delivery', `${(submission.estimatedDeliveryMs / 1000).toFixed(1)} s`]);
  rows.push(['wallet registered', submission.recipientRegistered ? 'yes' : 'no']);
  if ('environment' in submission) rows.push(['environment', submission.environment]);
  if (idempotencyKey !== undefined) rows.push(['idempotency key', idempotencyKey]);
  out.fields(rows);
}

export function showNotification(out: Output, record: Notification): void {
  const rows: [string, string][] = [
    ['id', record.notification_id],
    ['status', colourStatus(out, record.status)],
    ['wallet', record.wallet],
    ['subject', record.subject],
    ['channel', record.delivery_channel ?? '-'],
    ['category', `${record.category} (${record.priority})`],
    ['created', record.created_at],
    ['delivered', record.delivered_at ?? '-'],
    ['receipt', record.receipt_tx ? `${record.receipt_status} ${record.receipt_tx}` : record.receipt_status],
    ['environment', record.environment],
  ];
  if (record.template_id) rows.push(['template', `${record.template_id} v${record.template_version}`]);
  if (record.broadcast_id) rows.push(['broadcast', record.broadcast_id]);
  if (record.schedule_id) rows.push(['schedule', record.schedule_id]);
  if (record.error) rows.push(['error', out.style.red(record.error)]);
  out.fields(rows);
  if (record.attempts.length > 0) {
    out.line();
    out.table(
      ['ATTEMPT', 'CHANNEL', 'PROVIDER', 'OUTCOME', 'DURATION', 'AT', 'ERROR'],
      record.attempts.map((a) => [String(a.attempt), a.channel, a.provider, a.outcome, `${a.duration_ms} ms`, a.created_at, a.error ?? '']),
    );
  }
}
