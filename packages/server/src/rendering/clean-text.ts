/**
 * Control characters never reach a recipient: C0/C1 controls are invisible, break SMS encoding
 * (they are outside GSM-7) and some clients reject them. Bidi embedding/override/isolate marks are
 * dropped too: in a subject they can disguise what a message claims to be.
 */
const CONTROL_EXCEPT_LINE_BREAKS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;
const LINE_OR_TAB = /[\t\n\r\u2028\u2029]/g;

/** Body text without control characters; tabs and line breaks stay (markdown needs them). */
export function stripControlChars(text: string): string {
  return text.replace(CONTROL_EXCEPT_LINE_BREAKS, '');
}

/** A subject on a single trimmed line: breaks and tabs become spaces, controls are removed. */
export function cleanSubject(subject: string): string {
  return stripControlChars(subject.replace(LINE_OR_TAB, ' '))
    .replace(/ {2,}/g, ' ')
    .trim();
}

/**
 * A character a reader sees: not white space, not a control character, not one Unicode says a
 * renderer may leave unseen (Default_Ignorable_Code_Point: zero-width and joiner characters,
 * direction marks, the soft hyphen, variation selectors, tag characters, the Hangul fillers), nor
 * the blank Braille pattern. As a pattern (source), for the schemas of names too.
 */
export const VISIBLE_CHARACTER = '[^\\s\\p{Cc}\\p{Default_Ignorable_Code_Point}\\u2800]';
const VISIBLE = new RegExp(VISIBLE_CHARACTER, 'u');

/** Whether the text shows anything at all; it stops at the first visible character. */
export function hasVisibleText(text: string): boolean {
  return VISIBLE.test(text);
}
