import { isUtf8 } from 'node:buffer';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const INTERNAL_ERROR = -32603;
/** Implementation-defined server error (JSON-RPC reserves -32000 to -32099): HTTP-level refusals. */
export const SERVER_ERROR = -32000;

export function jsonRpcError(code: number, message: string, id: string | number | null = null): JsonRpcErrorBody {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * The id of a message, or null when it has none that can be read. An integer beyond ±(2^53 − 1)
 * has already lost digits in parsing: answering with it would name another request.
 */
export function idOf(message: unknown): string | number | null {
  const id = idField(message);
  return typeof id === 'string' || (typeof id === 'number' && isExact(id)) ? id : null;
}

const idField = (message: unknown) => (message as { id?: unknown } | null)?.id;

/** False for a numeric id too large to have been read exactly. */
const isExact = (id: unknown) => typeof id !== 'number' || !Number.isInteger(id) || Number.isSafeInteger(id);
const hasExactId = (message: unknown) => isExact(idField(message));

/** The most messages a batch may hold: each is served, and charged against the client's limit, on its own. */
export const MAX_BATCH = 100;

const NOT_A_MESSAGE =
  'Invalid Request: expected a JSON-RPC 2.0 message ({"jsonrpc": "2.0", "method": string, "params"?: object, "id"?: string | integer})';
const INEXACT_ID =
  'Invalid Request: the id is an integer beyond ±9007199254740991, which a JSON number does not carry exactly here; send it as a string';

const MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params', 'result', 'error']);

/** The members of an object that JSON-RPC 2.0 does not define (a message holds no others). */
function unknownMembers(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.keys(value).filter((key) => !MEMBERS.has(key));
}

/** Why a value is not a JSON-RPC message, as far as can be told. */
function whyNotAMessage(value: unknown): string {
  if (!hasExactId(value)) return INEXACT_ID;
  const unknown = unknownMembers(value);
  if (unknown.length === 0) return NOT_A_MESSAGE;
  const named = unknown.slice(0, 5).map((key) => JSON.stringify(key)).join(', ');
  return `${NOT_A_MESSAGE}; it has ${unknown.length === 1 ? 'a member' : 'members'} JSON-RPC 2.0 does not define: ${named}${unknown.length > 5 ? ', …' : ''}`;
}

/** The -32600 answer to a value that is not a JSON-RPC message. */
const notAMessage = (value: unknown) => jsonRpcError(INVALID_REQUEST, whyNotAMessage(value), idOf(value));

/**
 * The message without `params._meta`: a malformed `_meta` inside object params is a fault of the
 * params (-32602, judged with the method's params), not of the message's JSON-RPC shape (-32600).
 */
export function withoutMeta(message: unknown): unknown {
  const params = (message as { params?: unknown } | null)?.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params) || !('_meta' in params)) return message;
  const { _meta: _ignored, ...rest } = params as Record<string, unknown>;
  return { ...(message as object), params: rest };
}

export const INVALID_PARAMS = -32602;

/**
 * What to do with a JSON-RPC message whose only fault is a malformed `params._meta` (a member
 * read with `badMeta`; the SDK's transport would call it a parse error): answer a request of a
 * method in `served` with -32602, a notification or a response with nothing (`answer: null`), and
 * hand a request of a method not served on without its `_meta`, for the SDK's -32601.
 */
export function metaFault(message: unknown, served: ReadonlySet<string>): { answer: JsonRpcErrorBody | null } | { message: unknown } {
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (id === undefined || typeof method !== 'string') return { answer: null };
  if (!served.has(method)) return { message: withoutMeta(message) };
  return { answer: jsonRpcError(INVALID_PARAMS, `Invalid params for ${method}: ${META_RULE}`, idOf(message)) };
}

const META_RULE =
  'params._meta must be an object, its progressToken (if any) a string or an integer and its io.modelcontextprotocol/related-task (if any) an object with a string taskId';

/**
 * A member of a request body: a JSON-RPC message to serve (`badMeta` when its only fault is a
 * malformed `params._meta`, see metaFault), or the -32600 error of a batch member that is not one.
 */
export type JsonRpcMember = { message: unknown; badMeta?: true } | { invalid: JsonRpcErrorBody };

/** A value of a request body as a member: a message, one whose only fault is its `_meta`, or not a message. */
function memberOf(value: unknown): JsonRpcMember {
  if (!hasExactId(value)) return { invalid: notAMessage(value) };
  if (JSONRPCMessageSchema.safeParse(value).success) return { message: value };
  const stripped = withoutMeta(value);
  return stripped !== value && JSONRPCMessageSchema.safeParse(stripped).success ? { message: value, badMeta: true } : { invalid: notAMessage(value) };
}

/** What a request body holds. */
export interface JsonRpcBody {
  /** The body's message, or a batch's members in order. */
  members: JsonRpcMember[];
  /** Whether the body is a batch (a JSON array), whose answer is then an array too. */
  batch: boolean;
}

/**
 * The JSON-RPC message (or batch) in a request body, or the error to answer. Parsing is ours, not
 * the SDK's: it reports a well-formed JSON value that is not a JSON-RPC message as a parse error
 * (-32700), where JSON-RPC 2.0 says invalid request (-32600). A batch is judged member by member
 * (JSON-RPC 2.0 §6): its invalid members are answered -32600 among the others' answers, and a
 * batch of nothing but invalid members is answered with their errors alone (400).
 */
export function readJsonRpcBody(raw: Buffer | string | undefined, maxBatch = MAX_BATCH): JsonRpcBody | { error: JsonRpcErrorBody | JsonRpcErrorBody[] } {
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : (raw ?? '');
  // JSON text is UTF-8 (RFC 8259 §8.1): other bytes would be read as U+FFFD, a message not as sent.
  if (Buffer.isBuffer(raw) && text.includes('\uFFFD') && !isUtf8(raw)) {
    return { error: jsonRpcError(PARSE_ERROR, 'Parse error: the body is not valid UTF-8 text') };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: jsonRpcError(PARSE_ERROR, `Parse error: ${text ? (error as Error).message : 'the body is empty'}`) };
  }
  if (!Array.isArray(value)) {
    const member = memberOf(value);
    return 'invalid' in member ? { error: member.invalid } : { members: [member], batch: false };
  }
  if (value.length === 0) return { error: jsonRpcError(INVALID_REQUEST, 'Invalid Request: empty batch') };
  if (value.length > maxBatch) return { error: jsonRpcError(INVALID_REQUEST, `Invalid Request: a batch holds at most ${maxBatch} messages, this one has ${value.length}`) };
  const members = value.map(memberOf);
  if (members.every((member) => 'invalid' in member)) return { error: members.map((member) => (member as { invalid: JsonRpcErrorBody }).invalid) };
  return { members, batch: true };
}
