/**
 * Arrays as query parameters in PostgreSQL's binary array format (what `array_recv` reads): both
 * drivers send a Buffer parameter as binary, and the server copies each element (its receive
 * function) instead of scanning the array's text for delimiters, quotes and escapes and then
 * parsing every element (three to five times less work per number on PGlite, the most for bigint;
 * for the send path's text columns, `array_in` was a seventh of PostgreSQL's time).
 *
 * Layout: dimensions (1), has-nulls flag, element type oid, length, lower bound (1), then each
 * element as its byte length (-1: NULL) and its bytes, numbers big-endian. An empty array has no
 * dimensions.
 */
const OID = { bool: 16, int2: 21, int4: 23, int8: 20, text: 25, timestamptz: 1184, jsonb: 3802 };
const HEADER = 20;

function emptyArray(oid: number): Buffer {
  const empty = Buffer.alloc(12);
  empty.writeUInt32BE(oid, 8);
  return empty;
}

function writeHeader(buffer: Buffer, oid: number, length: number, hasNulls: boolean) {
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(hasNulls ? 1 : 0, 4);
  buffer.writeUInt32BE(oid, 8);
  buffer.writeInt32BE(length, 12);
  buffer.writeInt32BE(1, 16);
}

/** An array of fixed-width elements; `write` puts one value at an offset. */
function fixedWidthArray<T>(oid: number, width: number, values: ArrayLike<T | null | undefined>, write: (view: DataView, at: number, value: T) => void): Buffer {
  if (values.length === 0) return emptyArray(oid);
  let nulls = 0;
  for (let i = 0; i < values.length; i++) if (values[i] === null || values[i] === undefined) nulls++;
  const buffer = Buffer.allocUnsafe(HEADER + values.length * 4 + (values.length - nulls) * width);
  writeHeader(buffer, oid, values.length, nulls > 0);
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let at = HEADER;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      view.setInt32(at, -1);
      at += 4;
      continue;
    }
    view.setInt32(at, width);
    write(view, at + 4, value);
    at += 4 + width;
  }
  return buffer;
}

/** A string's length in UTF-8: its length when it is all ASCII, which is the usual case. */
function utf8Length(value: string): number {
  for (let i = 0; i < value.length; i++) if (value.charCodeAt(i) > 0x7f) return Buffer.byteLength(value, 'utf8');
  return value.length;
}

/** Writes a string's UTF-8 bytes, `bytes` long; short ASCII strings byte by byte (no call into the runtime). */
function writeUtf8(buffer: Buffer, at: number, value: string, bytes: number) {
  if (bytes !== value.length) buffer.write(value, at, bytes, 'utf8');
  else if (bytes > 64) buffer.write(value, at, bytes, 'latin1');
  else for (let i = 0; i < bytes; i++) buffer[at + i] = value.charCodeAt(i);
}

/**
 * An array of UTF-8 text elements; `prefix` (jsonb's format version) comes before each. A value
 * equal to the one before it (a request's protocol, status, category, ...) is copied from it.
 */
function textLikeArray(oid: number, values: readonly (string | null | undefined)[], prefix?: number): Buffer {
  if (values.length === 0) return emptyArray(oid);
  const extra = prefix === undefined ? 0 : 1;
  const lengths = new Int32Array(values.length);
  let size = HEADER;
  let hasNulls = false;
  let previous: string | undefined;
  let previousLength = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      lengths[i] = -1;
      hasNulls = true;
      size += 4;
      continue;
    }
    if (value !== previous) {
      previous = value;
      previousLength = utf8Length(value) + extra;
    }
    lengths[i] = previousLength;
    size += 4 + previousLength;
  }
  const buffer = Buffer.allocUnsafe(size);
  writeHeader(buffer, oid, values.length, hasNulls);
  let at = HEADER;
  let previousAt = -1;
  previous = undefined;
  for (let i = 0; i < values.length; i++) {
    const length = lengths[i];
    buffer.writeInt32BE(length, at);
    at += 4;
    if (length < 0) continue;
    const value = values[i]!;
    if (value === previous) buffer.copyWithin(at, previousAt, previousAt + length);
    else {
      if (extra) buffer[at] = prefix!;
      writeUtf8(buffer, at + extra, value, length - extra);
      previous = value;
      previousAt = at;
    }
    at += length;
  }
  return buffer;
}

/** PostgreSQL's epoch (2000-01-01 UTC) in Unix milliseconds; its timestamps count microseconds from it. */
const POSTGRES_EPOCH_MS = 946_684_800_000;

/** A `smallint[]` parameter. */
export const int2Array = (values: ArrayLike<number | null>) => fixedWidthArray(OID.int2, 2, values, (view, at, value: number) => view.setInt16(at, value));
/** An `integer[]` parameter. */
export const int4Array = (values: ArrayLike<number | null>) => fixedWidthArray(OID.int4, 4, values, (view, at, value: number) => view.setInt32(at, value));
/** A `bigint[]` parameter (whole numbers within ±2^53). */
export const int8Array = (values: ArrayLike<number | null>) =>
  fixedWidthArray(OID.int8, 8, values, (view, at, value: number) => view.setBigInt64(at, BigInt(value)));
/** A `boolean[]` parameter. */
export const boolArray = (values: ArrayLike<boolean | null>) => fixedWidthArray(OID.bool, 1, values, (view, at, value: boolean) => view.setUint8(at, value ? 1 : 0));
/** A `timestamptz[]` parameter (millisecond precision, as a Date has). */
export const timestamptzArray = (values: ArrayLike<Date | null>) =>
  fixedWidthArray(OID.timestamptz, 8, values, (view, at, value: Date) => view.setBigInt64(at, BigInt(value.getTime() - POSTGRES_EPOCH_MS) * 1000n));
/** A `text[]` parameter. */
export const textArray = (values: readonly (string | null | undefined)[]) => textLikeArray(OID.text, values);
/** A `jsonb[]` parameter from JSON texts (format version 1, then the text). */
export const jsonbArray = (values: readonly (string | null | undefined)[]) => textLikeArray(OID.jsonb, values, 1);
