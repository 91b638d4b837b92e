import type { Deps } from '../deps.js';
import { JobLoop } from '../jobs/loop.js';
import { WebhookDispatcher } from './dispatcher.js';
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
    await super.stop();
    await this.dispatcher.stop();
    this.sender.close();
  }
}

/** Fans out events and sends webhook deliveries; wakes on the `webhooks` topic and polls every 500 ms. */
export function webhookLoop(deps: Deps): JobLoop {
  const sender = new WebhookSender({ allowPrivate: deps.config.allowPrivateWebhooks, timeoutMs: deps.config.webhookTimeoutMs, now: deps.now });
  const dispatcher = new WebhookDispatcher(deps, { sender });
  const loop = new WebhookLoop(dispatcher, sender, deps);
  dispatcher.onChainDone = () => loop.wake();
  deps.wakeup.on('webhooks', () => loop.wake());
  return loop;
}
