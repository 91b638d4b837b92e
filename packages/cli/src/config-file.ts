import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CliError, EXIT } from './exit-codes.js';

/** What `herald auth login` remembers. */
export interface StoredConfig {
  apiKey?: string;
  baseUrl?: string;
}

/** `$XDG_CONFIG_HOME/herald/config.json`, falling back to `~/.config/herald/config.json`. */
export function configPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || homedir(), '.config');
  return path.join(base, 'herald', 'config.json');
}

const REASONS: Record<string, string> = {
  EISDIR: 'it is a directory',
  ERR_FS_EISDIR: 'it is a directory',
  ENOTDIR: 'a part of its path is a file, not a directory',
  EEXIST: 'a part of its path is a file, not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** A config path the system refuses (a directory named config.json, a file where a directory goes, no permission). */
function unusable(file: string, action: 'read' | 'written' | 'deleted', error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  const why = code ? `${REASONS[code] ?? 'the system refused'} (${code})` : (error as Error).message;
  return new CliError(EXIT.error, 'CONFIG_INVALID', `${file} cannot be ${action}: ${why}; fix the path (HOME, XDG_CONFIG_HOME) or what is there`);
}

export function readConfig(file: string): StoredConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw unusable(file, 'read', error);
  }
  const invalid = (why: string) => new CliError(EXIT.error, 'CONFIG_INVALID', `${file} ${why}: fix or delete it (herald auth logout)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('is not valid JSON: it must hold an object');
  const { apiKey, baseUrl } = parsed as Record<string, unknown>;
  if (apiKey !== undefined && typeof apiKey !== 'string') throw invalid('is not valid: apiKey must be a string');
  if (baseUrl !== undefined && (typeof baseUrl !== 'string' || !isHttpUrl(baseUrl))) {
    throw invalid(`is not valid: baseUrl must be an http:// or https:// URL without a query or fragment, got ${JSON.stringify(baseUrl)}`);
  }
  return { ...(apiKey ? { apiKey } : {}), ...(baseUrl ? { baseUrl } : {}) };
}

/** What the SDK takes as a base URL: http(s), nothing after the path. */
function isHttpUrl(text: string): boolean {
  if (/[?#]/.test(text)) return false;
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

/**
 * Writes the file readable by its owner only: it holds an API key. The temporary file is created
 * 0600 before any byte is written, and renamed over the old one so a crash leaves either version.
 */
export function writeConfig(file: string, config: StoredConfig): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, file);
  } catch (error) {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing to clean where nothing could be written (ENOTDIR, EACCES): the first error says why.
    }
    throw unusable(file, 'written', error);
  }
}

/** Deletes the file; true when there was one. */
export function removeConfig(file: string): boolean {
  try {
    rmSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw unusable(file, 'deleted', error);
  }
}
