import { ApiError } from '../http/errors.js';
import { hasVisibleText } from '../rendering/clean-text.js';
import { tierOf } from '../tiers.js';

/**
 * What a message must hold before anything is stored or charged: a body within the tier's size,
 * and a subject and a body with something to show: not only spaces, control characters (which are
 * dropped) and zero-width characters. A blank message could not be delivered: Telegram and Twilio
 * refuse empty text, and the email would go without a subject. `field` names a field as the request
 * wrote it (`notifications[2].body`).
 */
export function checkContent(tierNumber: number, item: { subject: string; body: string }, field: (name: string) => string = (name) => name): void {
  const tier = tierOf(tierNumber);
  const size = Buffer.byteLength(item.body, 'utf8');
  if (size > tier.maxBodyBytes) throw new ApiError('VALIDATION_ERROR', `${field('body')} is ${size} bytes; the ${tier.name} tier allows ${tier.maxBodyBytes}`);
  if (!hasVisibleText(item.subject)) throw blank(field('subject'));
  if (!hasVisibleText(item.body)) throw blank(field('body'));
}

function blank(field: string): ApiError {
  return new ApiError('VALIDATION_ERROR', `${field} is blank: it must hold something to show, not only spaces, control or zero-width characters`);
}
