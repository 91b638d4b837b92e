import { DEFAULT_BASE_URL, Herald, HeraldAdmin, SDK_VERSION } from '@herald/sdk';
import type { Command } from 'commander';
import { configPath, readConfig } from './config-file.js';
import { CliError, EXIT } from './exit-codes.js';
import { Output, wantsColour } from './output.js';
import type { PromptIo } from './prompt.js';

/** The process's streams and environment, passed in rather than read from globals. */
export interface Io extends PromptIo {
  stdout: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  version: string;
}

/** Where a setting came from, as whoami reports it. */
export type Source = 'flag' | 'env' | 'config' | 'default';

/** What every command works with: resolved settings, output, and SDK clients. */
export class Context {
  constructor(
    readonly io: Io,
    readonly out: Output,
    readonly baseUrl: string,
    readonly apiKey: { value: string; source: Source } | undefined,
    readonly configFile: string,
    private readonly request: { maxRetries?: number; timeoutMs?: number },
  ) {}

  get json(): boolean {
    return this.out.json;
  }

  private clientOptions() {
    const { maxRetries, timeoutMs } = this.request;
    return {
      baseUrl: this.baseUrl,
      ...(maxRetries !== undefined ? { maxRetries } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      userAgent: `herald-cli/${this.io.version} herald-sdk-js/${SDK_VERSION}`,
    };
  }

  /** A client with the resolved API key; fails with exit 4 when there is none. */
  herald(): Herald {
    if (!this.apiKey) {
      throw new CliError(EXIT.auth, 'NO_API_KEY', 'No API key: pass --api-key, set HERALD_API_KEY or run `herald auth login`');
    }
    return this.heraldWith(this.apiKey.value);
  }

  /** A client with the given key (or none); `defaults` apply where --max-retries/--timeout are not given. */
  heraldWith(apiKey: string | undefined, defaults: { maxRetries?: number; timeoutMs?: number } = {}): Herald {
    return new Herald({ ...defaults, ...this.clientOptions(), apiKey });
  }

  admin(token: string | undefined): HeraldAdmin {
    if (!token) {
      throw new CliError(EXIT.auth, 'NO_ADMIN_TOKEN', 'No admin token: pass --admin-token or set HERALD_ADMIN_TOKEN');
    }
    return new HeraldAdmin({ ...this.clientOptions(), adminToken: token });
  }
}

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

function sourceOf(root: Command, option: string): Source {
  return root.getOptionValueSource(option) === 'env' ? 'env' : 'flag';
}

/**
 * Resolves the global options for a command: flag, then environment variable (commander reads
 * both), then the config file written by `auth login`, then the default.
 */
export function contextFor(command: Command, io: Io, { ignoreConfigFile = false } = {}): Context {
  const root = rootOf(command);
  const options = root.opts<{ json?: boolean; apiKey?: string; baseUrl?: string; maxRetries?: number; timeout?: number }>();
  const json = Boolean(options.json);
  const out = new Output(json, wantsColour(json, io.env, io.stdout), io.stdout, io.stderr);
  const file = configPath(io.env);
  const stored = ignoreConfigFile ? {} : readConfig(file);
  const apiKey = options.apiKey
    ? { value: options.apiKey, source: sourceOf(root, 'apiKey') }
    : stored.apiKey
      ? { value: stored.apiKey, source: 'config' as const }
      : undefined;
  const baseUrl = options.baseUrl || stored.baseUrl || DEFAULT_BASE_URL;
  // Given empty (HERALD_MAX_RETRIES= in a script), commander keeps '': not given (unlessEmpty).
  const maxRetries = typeof options.maxRetries === 'number' ? options.maxRetries : undefined;
  return new Context(io, out, baseUrl, apiKey, file, { maxRetries, timeoutMs: options.timeout });
}

/** Output settings known before commander has parsed anything, for reporting its own errors. */
export function earlyOutput(argv: string[], io: Io): Output {
  const json = argv.includes('--json');
  return new Output(json, wantsColour(json, io.env, io.stderr), io.stdout, io.stderr);
}
