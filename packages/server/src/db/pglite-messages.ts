/** What the server's thread and the embedded database's thread (pglite-thread.ts) say to each other. */

export type PgliteRequest =
  | { op: 'query'; id: number; text: string; params?: unknown[]; tx?: number }
  | { op: 'exec'; id: number; sql: string }
  /** Opens a transaction; its id is this message's id. */
  | { op: 'begin'; id: number }
  | { op: 'end'; id: number; tx: number; commit: boolean }
  /** Starts listening; notifications carry this message's id. */
  | { op: 'listen'; id: number; channel: string }
  | { op: 'unlisten'; id: number; listener: number }
  | { op: 'close'; id: number };

export interface SerializedDbError {
  message: string;
  severity?: string;
  code?: string;
  detail?: string;
  hint?: string;
  position?: string;
  where?: string;
  schema?: string;
  table?: string;
  column?: string;
  dataType?: string;
  constraint?: string;
  routine?: string;
}

export type PgliteReply =
  | { id: number; rows?: unknown[]; error?: SerializedDbError }
  | { notify: number; payload: string }
  | { ready: boolean; error?: SerializedDbError };
