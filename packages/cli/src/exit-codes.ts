import { HeraldApiError, HeraldNetworkError } from '@herald/sdk';
import { CommanderError } from 'commander';

/** The documented exit codes; scripts branch on these, so they never change meaning. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  notFound: 3,
  auth: 4,
  rateLimited: 5,
  network: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI detects itself (bad usage, missing credentials, a declined prompt). */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(EXIT.usage, 'USAGE', message);
export const cancelled = (message = 'Cancelled') => new CliError(EXIT.usage, 'CANCELLED', message);

/**
 * The exit code for an error. A 400 from the gateway is the caller's input rejected, so it counts
 * as bad usage like a wrong flag.
 */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
    // `herald help [command]` asked for the help (0); a missing command shows it as an error (1).
    if (error.code === 'commander.help') return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return EXIT.usage;
  }
  if (error instanceof HeraldNetworkError) return EXIT.network;
  if (error instanceof HeraldApiError) {
    if (error.statusCode === 401 || error.statusCode === 403) return EXIT.auth;
    if (error.statusCode === 404) return EXIT.notFound;
    if (error.statusCode === 429) return EXIT.rateLimited;
    if (error.statusCode === 400) return EXIT.usage;
  }
  return EXIT.error;
}
