import { HeraldApiError, HeraldNetworkError } from '@herald/sdk';
import { CliError, exitCodeFor } from './exit-codes.js';
import { retryKeyOf, retryNoteOf } from './idempotency-key.js';

export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
}

const ansi = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;
const COLOURS: Style = { bold: ansi(1, 22), dim: ansi(2, 22), green: ansi(32, 39), red: ansi(31, 39), yellow: ansi(33, 39) };
const PLAIN: Style = { bold: (t) => t, dim: (t) => t, green: (t) => t, red: (t) => t, yellow: (t) => t };

/**
 * Colours only for a person at a terminal: never with --json, never when NO_COLOR is set
 * (no-color.org) or FORCE_COLOR is `0` or `false` (as Node and chalk read it), forced by any other
 * FORCE_COLOR on a pipe, otherwise when the stream is a TTY.
 */
export function wantsColour(json: boolean, env: NodeJS.ProcessEnv, stream: Stream): boolean {
  if (json) return false;
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/**
 * Everything the CLI prints goes through here. In --json mode stdout carries exactly one JSON
 * document per command and nothing else; errors go to stderr, as JSON too.
 */
export class Output {
  readonly style: Style;

  constructor(
    readonly json: boolean,
    colour: boolean,
    private readonly stdout: Stream,
    private readonly stderr: Stream,
  ) {
    this.style = colour ? COLOURS : PLAIN;
  }

  /** The command's result: the value as JSON, or the human rendering. */
  result(value: unknown, human: () => void): void {
    if (this.json) this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    else human();
  }

  /** A line for people; dropped in --json mode. */
  line(text = ''): void {
    if (!this.json) this.stdout.write(`${text}\n`);
  }

  /** A warning or hint for people, on stderr; dropped in --json mode. */
  note(text: string): void {
    if (!this.json) this.stderr.write(`${text}\n`);
  }

  /** Aligned `label  value` lines. */
  fields(rows: [string, string | number][]): void {
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) this.line(`${this.style.dim(label.padEnd(width))}  ${value}`);
  }

  /** A table with a header row; columns are padded to their widest cell (colour codes not counted). */
  table(headers: string[], rows: string[][]): void {
    const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => visibleLength(row[i] ?? ''))));
    const render = (cells: string[]) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat(widths[i] - visibleLength(cell))))
        .join('  ')
        .trimEnd();
    this.line(this.style.bold(render(headers)));
    for (const row of rows) this.line(render(row));
  }

  /** Reports a failure on stderr. */
  error(error: unknown, hint?: string): void {
    const exitCode = exitCodeFor(error);
    const described = describe(error);
    const retryKey = retryKeyOf(error);
    if (this.json) {
      this.stderr.write(`${JSON.stringify({ error: { ...described, exitCode, ...(retryKey ? { idempotencyKey: retryKey } : {}) } })}\n`);
      return;
    }
    // Network messages already name their cause; usage errors have no code worth showing.
    const quiet = described.code === 'USAGE' || error instanceof HeraldNetworkError;
    const code = quiet ? '' : this.style.dim(` (${described.code})`);
    this.stderr.write(`${this.style.red('Error:')} ${described.message}${code}\n`);
    if (hint) this.stderr.write(`${this.style.dim(hint)}\n`);
    if (retryKey) this.stderr.write(`${this.style.dim(retryNoteOf(error))}\n`);
  }
}

const visibleLength = (text: string) => text.replace(/\x1b\[\d+m/g, '').length;

function describe(error: unknown): { code: string; message: string; statusCode?: number; requestId?: string } {
  if (error instanceof HeraldApiError) {
    return { code: error.code, message: error.message, statusCode: error.statusCode, ...(error.requestId ? { requestId: error.requestId } : {}) };
  }
  if (error instanceof HeraldNetworkError) return { code: `NETWORK_${error.kind.toUpperCase()}`, message: error.message };
  if (error instanceof CliError) return { code: error.code, message: error.message };
  return { code: 'ERROR', message: error instanceof Error ? error.message : String(error) };
}

/**
 * Shows enough of a key to recognise it, never enough to use it: the same leading characters the
 * gateway keeps as the key's `prefix` (see `herald admin keys list`), e.g. `hrld_live_abYD…`.
 */
export function maskKey(key: string): string {
  const prefix = /^hrld_(live|test)_/.exec(key)?.[0] ?? '';
  const rest = key.slice(prefix.length);
  return rest.length < 12 ? `${prefix}…` : `${prefix}${rest.slice(0, 4)}…`;
}
