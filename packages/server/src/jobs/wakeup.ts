import { EventEmitter } from 'node:events';
import type { Database } from '../db/connection.js';

export type Topic = 'notifications' | 'webhooks' | 'schedules' | 'receipts';
const CHANNEL = 'herald_wakeup';

/**
 * Tells background loops that work was committed: in this process through an event, and, on
 * PostgreSQL, to every other process through NOTIFY. Loops still poll, so a lost signal only
 * delays work.
 */
export class Wakeup {
  private readonly local = new EventEmitter();
  private unlisten: (() => Promise<void>) | undefined;

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

  /** Call after the commit that created the work. */
  notify(topic: Topic): void {
    this.local.emit(topic);
    if (this.db.engine === 'postgres') this.db.query('SELECT pg_notify($1, $2)', [CHANNEL, topic]).catch(() => {});
  }

  async close(): Promise<void> {
    await this.unlisten?.();
    this.local.removeAllListeners();
  }
}
