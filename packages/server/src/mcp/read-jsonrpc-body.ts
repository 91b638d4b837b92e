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

/**
 * The JSON-RPC message (or batch) in a request body, or the error to answer. Parsing is ours, not
 * the SDK's: it reports a well-formed JSON value that is not a JSON-RPC message as a parse error
 * (-32700), where JSON-RPC 2.0 says invalid request (-32600).
 */
export function readJsonRpcBody(raw: string | undefined): { message: unknown } | { error: JsonRpcErrorBody } {
  let value: unknown;
  try {
    value = JSON.parse(raw ?? '');
  } catch (error) {
    return { error: jsonRpcError(PARSE_ERROR, `Parse error: ${raw ? (error as Error).message : 'the body is empty'}`) };
  }
  const messages = Array.isArray(value) ? value : [value];
  if (messages.length === 0) return { error: jsonRpcError(INVALID_REQUEST, 'Invalid Request: empty batch') };
  const invalid = messages.find((message) => !JSONRPCMessageSchema.safeParse(message).success);
  if (invalid !== undefined) {
    return {
      error: jsonRpcError(
        INVALID_REQUEST,
        'Invalid Request: expected a JSON-RPC 2.0 message ({"jsonrpc": "2.0", "method": string, "params"?: object, "id"?: string | number})',
        Array.isArray(value) ? null : idOf(invalid),
      ),
    };
  }
  return { message: value };
}
