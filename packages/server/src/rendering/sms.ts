import type { Markdown } from './markdown.js';
import { markdownToPlainText, plainTextDialect } from './plain-text.js';
import type { TextDialect } from './render-markdown-text.js';

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsSegments {
  encoding: SmsEncoding;
  segments: number;
  /** Units counted against the segment size: septets for GSM-7, UTF-16 code units for UCS-2. */
  characters: number;
}

// GSM 03.38 basic character set (ESC at 0x1B is left out: it only introduces the extension table).
const GSM_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
    '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
// Extension table: each costs two septets (ESC + code).
const GSM_EXTENSION = new Set('\f^{}\\[~]|€');

const SEGMENT_SIZE: Record<SmsEncoding, { single: number; multi: number }> = {
  'GSM-7': { single: 160, multi: 153 },
  'UCS-2': { single: 70, multi: 67 },
};

/**
 * GSM-7 when every character is in the basic set or the extension table, else UCS-2. Segments are
 * packed the way handsets and carriers do: an escape pair or a surrogate pair is never split across
 * two segments, so a character that does not fit the rest of a segment opens the next one.
 */
export function countSmsSegments(text: string): SmsSegments {
  const chars = Array.from(text);
  const { encoding, units } = smsUnits(chars);
  const characters = units.reduce((sum, unit) => sum + unit, 0);
  const size = SEGMENT_SIZE[encoding];
  if (characters === 0) return { encoding, segments: 0, characters };
  if (characters <= size.single) return { encoding, segments: 1, characters };
  let segments = 1;
  let filled = 0;
  for (const unit of units) {
    if (filled + unit > size.multi) {
      segments += 1;
      filled = 0;
    }
    filled += unit;
  }
  return { encoding, segments, characters };
}

/** The encoding the characters need, and what each costs in it: septets for GSM-7, UTF-16 code units for UCS-2. */
function smsUnits(chars: string[]): { encoding: SmsEncoding; units: number[] } {
  const gsm = chars.every((char) => GSM_BASIC.has(char) || GSM_EXTENSION.has(char));
  return { encoding: gsm ? 'GSM-7' : 'UCS-2', units: chars.map((char) => (gsm ? (GSM_EXTENSION.has(char) ? 2 : 1) : char.length)) };
}

// SMS has no layout: quotes lose their markers and rules vanish rather than read as stray symbols.
const smsDialect: TextDialect = { ...plainTextDialect, blockquote: (inner) => inner, rule: '' };

/** Twilio's Messages API refuses a longer body (error 21617). */
export const SMS_MAX_CHARS = 1600;

/**
 * The text cut to SMS_MAX_CHARS characters as the message's encoding counts them (an extension
 * character is two GSM-7 septets, an emoji two UCS-2 units), ending in `...` when cut (three dots
 * rather than `…`, which is not in GSM-7 and would double the segments of the whole message); a
 * surrogate pair or an escape pair is never split.
 */
export function truncateSmsText(text: string, limit = SMS_MAX_CHARS): string {
  // No character costs more than two units per UTF-16 code unit: most texts need no counting here.
  if (2 * text.length <= limit) return text;
  const chars = Array.from(text);
  const { units } = smsUnits(chars);
  let total = units.reduce((sum, unit) => sum + unit, 0);
  if (total <= limit) return text;
  let end = chars.length;
  while (end > 0 && total > limit - 3) total -= units[--end];
  return `${chars.slice(0, end).join('').trimEnd()}...`;
}

/**
 * Characters that show nothing and mean nothing on one line of plain text (the soft hyphen, the
 * zero-width space, the word joiner, the zero-width no-break space or byte-order mark): none is in
 * GSM-7, so one would make the whole message UCS-2, at more than twice the segments. Joiners and
 * variation selectors stay: they shape scripts and emoji.
 */
const UNSEEN = /[\u00AD\u200B\u2060\uFEFF]/g;

/** "subject: body" as one line of plain text. */
export function renderSmsText(subject: string, body: Markdown): string {
  const text = markdownToPlainText(body, smsDialect).replace(UNSEEN, '').replace(/\s+/g, ' ').trim();
  return [subject.replace(UNSEEN, ''), text].filter(Boolean).join(': ');
}
