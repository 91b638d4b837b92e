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

function idOf(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

const NOT_A_MESSAGE =
  'Invalid Request: expected a JSON-RPC 2.0 message ({"jsonrpc": "2.0", "method": string, "params"?: object, "id"?: string | number})';

/** What a request body holds: the valid messages to serve, and an error for each invalid member of a batch. */
export interface JsonRpcBody {
  /** The body's message, or its valid members when it is a batch. */
  message: unknown;
  /** Whether the body is a batch (a JSON array), whose answer is then an array too. */
  batch: boolean;
  /** -32600 for each member of a batch that is not a JSON-RPC message, in order. */
  invalid: JsonRpcErrorBody[];
}

/**
 * The JSON-RPC message (or batch) in a request body, or the error to answer. Parsing is ours, not
 * the SDK's: it reports a well-formed JSON value that is not a JSON-RPC message as a parse error
 * (-32700), where JSON-RPC 2.0 says invalid request (-32600). A batch is judged member by member
 * (JSON-RPC 2.0 §6): its invalid members are answered -32600 beside the others' answers, and a
 * batch of nothing but invalid members is answered with their errors alone (400).
 */
export function readJsonRpcBody(raw: string | undefined): JsonRpcBody | { error: JsonRpcErrorBody | JsonRpcErrorBody[] } {
  let value: unknown;
  try {
    value = JSON.parse(raw ?? '');
  } catch (error) {
    return { error: jsonRpcError(PARSE_ERROR, `Parse error: ${raw ? (error as Error).message : 'the body is empty'}`) };
  }
  const isMessage = (message: unknown) => JSONRPCMessageSchema.safeParse(message).success;
  if (!Array.isArray(value)) return isMessage(value) ? { message: value, batch: false, invalid: [] } : { error: jsonRpcError(INVALID_REQUEST, NOT_A_MESSAGE, idOf(value)) };
  if (value.length === 0) return { error: jsonRpcError(INVALID_REQUEST, 'Invalid Request: empty batch') };
  const valid: unknown[] = [];
  const invalid: JsonRpcErrorBody[] = [];
  for (const member of value) {
    if (isMessage(member)) valid.push(member);
    else invalid.push(jsonRpcError(INVALID_REQUEST, NOT_A_MESSAGE, idOf(member)));
  }
  if (valid.length === 0) return { error: invalid };
  return { message: valid, batch: true, invalid };
}
