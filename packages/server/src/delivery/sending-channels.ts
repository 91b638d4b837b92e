import type { Channel, ChannelProvider } from '../channels/provider.js';

/**
 * At most `limit` pieces of work at a time; the others wait their turn in the order they came.
 * Work waits on behalf of an owner (a delivery loop), whose waiting work can be let through at
 * once, without a lane (`abandon`): a stopping loop's work that only gives its row back.
 */
class Lanes {
  private active = 0;
  private waiting: { owner: object; go: (withoutLane: boolean) => void }[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(owner: object, work: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else if (await new Promise<boolean>((go) => this.waiting.push({ owner, go }))) return work();
    try {
      return await work();
    } finally {
      // The lane passes straight to the next in line, or frees up.
      const next = this.waiting.shift();
      if (next) next.go(false);
      else this.active--;
    }
  }

  /** Lets the owner's waiting work through now, outside the lanes. */
  abandon(owner: object): void {
    const abandoned = this.waiting.filter((waiter) => waiter.owner === owner);
    this.waiting = this.waiting.filter((waiter) => waiter.owner !== owner);
    for (const waiter of abandoned) waiter.go(true);
  }
}

/**
 * What the delivery loops of one process share while they send through providers: each channel's
 * lanes (at most `concurrency` sends in flight, whichever loop claimed them) and the count of
 * rows each channel holds, claimed and not yet settled. A channel holding `cap` rows is full: no
 * loop takes more of its rows until one is settled. A provider that answers slowly or not at all
 * fills its own channel, never the others', and a full channel's rows stay in the database, due,
 * for any worker with room.
 */
export class SendingChannels {
  private readonly lanes = new Map<Channel, Lanes>();
  private readonly held = new Map<Channel, number>();
  private readonly roomListeners: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly cap: number,
  ) {}

  /** The lanes of a channel, sized by its provider (an SMTP pool's connections at most). */
  lanesFor(channel: Channel, provider: ChannelProvider): Lanes {
    let lanes = this.lanes.get(channel);
    if (!lanes) this.lanes.set(channel, (lanes = new Lanes(Math.min(this.concurrency, provider.maxConcurrency ?? Infinity))));
    return lanes;
  }

  /** Holds a place for a row of `channel`: false when the channel is full. */
  take(channel: Channel): boolean {
    const held = this.held.get(channel) ?? 0;
    if (held >= this.cap) return false;
    this.held.set(channel, held + 1);
    return true;
  }

  /** A held row was settled or given back; a full channel that now has room tells the loops. */
  release(channel: Channel): void {
    const held = (this.held.get(channel) ?? 1) - 1;
    this.held.set(channel, held);
    if (held === this.cap - 1) for (const listener of this.roomListeners) listener();
  }

  /** Whether some channel is full. */
  anyFull(): boolean {
    for (const held of this.held.values()) if (held >= this.cap) return true;
    return false;
  }

  onRoom(listener: () => void): void {
    this.roomListeners.push(listener);
  }

  /** Lets a stopping loop's work waiting in any channel through at once (see Lanes). */
  abandon(owner: object): void {
    for (const lanes of this.lanes.values()) lanes.abandon(owner);
  }
}
