import { EventEmitter } from 'node:events';
import type { Database } from '../db/connection.js';

export type Topic = 'notifications' | 'webhooks' | 'schedules' | 'receipts';
const CHANNEL = 'herald_wakeup';
/** Signals to other processes are sent at most once per topic in this window. */
const COALESCE_MS = 5;

/**
 * Tells background loops that work was committed: in this process through an event, and, on
 * PostgreSQL, to every other process through NOTIFY. Loops still poll, so a lost signal only
 * delays work.
 */
export class Wakeup {
  private readonly local = new EventEmitter();
  private unlisten: (() => Promise<void>) | undefined;
  private readonly pending = new Set<Topic>();
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Database) {
    this.local.setMaxListeners(50);
  }

  /** Start receiving other processes' signals (worker processes on PostgreSQL). */
  async listen(): Promise<void> {
    if (this.db.engine !== 'postgres' || this.unlisten) return;
    this.unlisten = await this.db.listen(CHANNEL, (payload) => this.local.emit(payload));
  }

  on(topic: Topic, handler: () => void): void {
    this.local.on(topic, handler);
  }

  /**
   * Call after the commit that created the work. Loops of this process hear it at once; other
   * processes within a few milliseconds: a busy API commits thousands of sends a second, and one
   * NOTIFY per topic per window wakes the workers as well as one per send would.
   */
  notify(topic: Topic): void {
    this.local.emit(topic);
    if (this.db.engine !== 'postgres') return;
    this.pending.add(topic);
    this.timer ??= setTimeout(() => this.flush(), COALESCE_MS);
  }

  private flush() {
    clearTimeout(this.timer);
    this.timer = undefined;
    const topics = [...this.pending];
    this.pending.clear();
    this.sending = Promise.all(topics.map((topic) => this.db.query('SELECT pg_notify($1, $2)', [CHANNEL, topic]).catch(() => {})));
  }

  async close(): Promise<void> {
    if (this.pending.size) this.flush();
    await this.sending;
    await this.unlisten?.();
    this.local.removeAllListeners();
  }
}
