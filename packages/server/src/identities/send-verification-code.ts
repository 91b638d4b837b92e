import type { ChannelRegistry } from '../channels/registry.js';
import type { SendOutcome } from '../channels/provider.js';
import { CODE_TTL_MS } from './one-time-secrets.js';

/** The account that Herald's own messages (codes, bot replies) are filed under. */
export const SYSTEM_PROTOCOL = 'herald';

const MINUTES = CODE_TTL_MS / 60_000;

/** Sends a verification code by email or SMS through the production provider of the channel. */
export function sendVerificationCode(
  channels: ChannelRegistry,
  message: { wallet: string; channel: 'email' | 'sms'; to: string; code: string },
): Promise<SendOutcome> {
  const meta = { protocolId: SYSTEM_PROTOCOL, wallet: message.wallet, environment: 'production' as const };
  const provider = channels.providerFor(message.channel, 'production');
  if (message.channel === 'sms') {
    const text = `${message.code} is your Herald verification code. It expires in ${MINUTES} minutes.`;
    return provider.send({ channel: 'sms', to: message.to, text, meta });
  }
  const text = [
    `Your Herald verification code is ${message.code}.`,
    '',
    `Enter it to confirm this address for wallet ${message.wallet}. It expires in ${MINUTES} minutes.`,
    'If you did not ask for it, ignore this message.',
  ].join('\n');
  const html =
    `<p>Your Herald verification code is <strong style="font-size:20px;letter-spacing:2px">${message.code}</strong>.</p>` +
    `<p>Enter it to confirm this address for wallet <code>${message.wallet}</code>. It expires in ${MINUTES} minutes.</p>` +
    '<p>If you did not ask for it, ignore this message.</p>';
  return provider.send({ channel: 'email', to: message.to, subject: `Your Herald verification code: ${message.code}`, text, html, meta });
}
