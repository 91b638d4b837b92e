import type { Channel, OutboundMessage } from '../channels/provider.js';
import { redirectTarget, type TrackingLinks } from '../engagement/tracking-links.js';
import { renderNotification, type Category } from '../rendering/render-notification.js';
import { renderTemplatedNotification, type TemplateVersion } from '../templates/render-templated-notification.js';
import type { Contacts } from './load-contacts.js';

export interface DeliverableNotification {
  id: string;
  protocol_id: string;
  protocol_name: string;
  environment: 'production' | 'sandbox';
  wallet: string;
  subject: string;
  body: string;
  category: string;
  template_id?: string | null;
  /** The template version the notification recorded (attached when claimed). */
  template?: TemplateVersion | null;
  template_variables?: Record<string, unknown> | null;
}

/** Channels whose contact a notification needs, by channel. */
export const CONTACT: Record<Channel, keyof Contacts> = { email: 'email', telegram: 'telegramChatId', sms: 'phone' };

export function contactFor(channel: Channel, contacts: Contacts | undefined): string | undefined {
  return contacts?.[CONTACT[channel]];
}

/**
 * The provider-ready message for one channel. Emails carry an open pixel, click-tracked links and
 * RFC 8058 one-click unsubscribe headers, all signed per notification.
 */
export function composeMessage(n: DeliverableNotification, channel: Channel, to: string, links: TrackingLinks): OutboundMessage {
  // Only an email carries tracking and unsubscribe links: the other channels sign none.
  const unsubscribeUrl = channel === 'email' ? links.link('unsubscribe', { notificationId: n.id }) : undefined;
  const common = {
    category: n.category as Category,
    protocolName: n.protocol_name,
    unsubscribeUrl,
    openPixelUrl: channel === 'email' ? links.link('open', { notificationId: n.id }) : undefined,
    // A link no URL parser reads is left as written: a redirect could only refuse it. So is one
    // too long for a tracking link to carry.
    rewriteLink: channel === 'email' ? (url: string) => (redirectTarget(url) ? (links.clickLink(n.id, url) ?? url) : url) : undefined,
  };
  if (n.template_id && !n.template) throw new Error(`template ${n.template_id} version of notification ${n.id} is missing`);
  // The rendering makes each channel's format on first read: only this channel's is made.
  const rendered = n.template
    ? renderTemplatedNotification({ ...common, template: n.template, variables: n.template_variables ?? {} })
    : renderNotification({ ...common, subject: n.subject, body: n.body });
  const meta = { protocolId: n.protocol_id, notificationId: n.id, wallet: n.wallet, environment: n.environment };
  switch (channel) {
    case 'email':
      return {
        channel,
        to,
        subject: rendered.subject,
        html: rendered.html,
        text: rendered.text,
        messageId: n.id,
        headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
        meta,
      };
    case 'telegram':
      return { channel, to, text: rendered.telegramText, meta };
    case 'sms':
      return { channel, to, text: rendered.sms.text, meta };
  }
}
