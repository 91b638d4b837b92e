import type { Deps } from '../deps.js';
import { JobLoop } from '../jobs/loop.js';
import { WebhookDispatcher, type DispatcherOptions } from './dispatcher.js';
import { WebhookSender } from './webhook-sender.js';

/** The dispatcher's loop; stopping it also lets in-flight requests finish and closes connections. */
class WebhookLoop extends JobLoop {
  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private readonly sender: WebhookSender,
    deps: Deps,
  ) {
    super({ name: 'webhooks', log: deps.log, idleMs: 500, pass: () => dispatcher.pass() });
  }

  override async stop(): Promise<void> {
    // The dispatcher stops first: its chains stop waiting for the database and give back what they
    // hold, so a pass waiting for one of them to make room ends too. Chains that pass started
    // meanwhile are waited for after it.
    const chainsEnded = this.dispatcher.stop();
    await super.stop();
    await chainsEnded;
    await this.dispatcher.idle();
    this.sender.close();
  }
}

/** Fans out events and sends webhook deliveries; wakes on the `webhooks` topic and polls every 500 ms. */
export function webhookLoop(deps: Deps, options: Omit<DispatcherOptions, 'sender'> = {}): JobLoop {
  const sender = new WebhookSender({ allowPrivate: deps.config.allowPrivateWebhooks, timeoutMs: deps.config.webhookTimeoutMs, now: deps.now });
  const dispatcher = new WebhookDispatcher(deps, { sender, ...options });
  const loop = new WebhookLoop(dispatcher, sender, deps);
  dispatcher.onChainDone = () => loop.wake();
  deps.wakeup.on('webhooks', () => loop.wake());
  return loop;
}
