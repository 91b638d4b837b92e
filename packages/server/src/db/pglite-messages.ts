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

/** The fields PostgreSQL reports on an error that cross with it (callers read `code`, `constraint`, ...). */
export const ERROR_FIELDS = ['severity', 'code', 'detail', 'hint', 'position', 'where', 'schema', 'table', 'column', 'dataType', 'constraint', 'routine'] as const;

export type SerializedDbError = { message: string } & Partial<Record<(typeof ERROR_FIELDS)[number], string>>;

export type PgliteReply =
  | { id: number; rows?: unknown[]; error?: SerializedDbError }
  | { notify: number; payload: string }
  | { ready: boolean; error?: SerializedDbError };
