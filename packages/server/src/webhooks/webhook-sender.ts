import type { PostResult } from './post-webhook.js';
import { postWebhook, webhookAgents } from './post-webhook.js';
import { resolveWebhookTarget, TargetRefusedError, type Lookup, type WebhookTarget } from './resolve-target.js';
import { signatureHeader } from './sign-payload.js';

export interface SenderOptions {
  /** HERALD_ALLOW_PRIVATE_WEBHOOKS: skip the public-address check (local development). */
  allowPrivate: boolean;
  /** A 2xx must arrive within this time (15 s unless configured). */
  timeoutMs: number;
  now: () => Date;
  lookup?: Lookup;
}

export const USER_AGENT = 'Herald-Webhooks/1.0';

/** Signs and sends webhook requests over keep-alive connections pinned to checked addresses. */
export class WebhookSender {
  private readonly agents = webhookAgents();

  constructor(readonly options: SenderOptions) {}

  /**
   * Resolves and checks an endpoint URL just before sending. A refusal is returned rather than
   * thrown: it becomes the error of the attempt, which is then recorded without any request made.
   */
  async target(url: string): Promise<WebhookTarget | TargetRefusedError> {
    try {
      return await resolveWebhookTarget(url, { allowPrivate: this.options.allowPrivate, lookup: this.options.lookup });
    } catch (error) {
      if (error instanceof TargetRefusedError) return error;
      throw error;
    }
  }

  /** One signed POST of `body`; the signature's timestamp is taken now, so each attempt has its own. */
  async send(target: WebhookTarget | TargetRefusedError, secret: string | readonly string[], body: string): Promise<PostResult> {
    if (target instanceof TargetRefusedError) {
      return { ok: false, statusCode: null, latencyMs: 0, responseBody: null, error: `not sent: ${target.message}` };
    }
    const timestamp = Math.floor(this.options.now().getTime() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-service-signature': signatureHeader(body, secret, timestamp),
    };
    return postWebhook(target, body, headers, { timeoutMs: this.options.timeoutMs, agents: this.agents });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
