import { Command, InvalidArgumentError, Option } from 'commander';
import { contextFor, type Io } from './context.js';
import { registerAdmin, type ContextOf } from './commands/admin.js';
import { registerAuth } from './commands/auth.js';
import { registerBroadcast } from './commands/broadcast.js';
import { registerDoctor } from './commands/doctor.js';
import { registerNotify } from './commands/notify.js';
import { registerProtocol } from './commands/protocol.js';
import { registerReports } from './commands/reports.js';
import { registerRequests } from './commands/requests.js';
import { registerSandbox } from './commands/sandbox.js';
import { registerSchedule } from './commands/schedule.js';
import { registerSubscription } from './commands/subscription.js';
import { registerTemplate } from './commands/template.js';
import { registerUsage } from './commands/usage.js';
import { registerWallet } from './commands/wallet.js';
import { registerWebhook } from './commands/webhook.js';
import { integerIn, unlessEmpty } from './parse-options.js';

function parseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be a URL such as http://localhost:3000');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('must be an http:// or https:// URL');
  // Paths are appended to it, as the SDK does: a query or fragment would swallow them, even an
  // empty one (a bare `?` or `#`, which the parsed URL does not show).
  if (/[?#]/.test(value)) throw new InvalidArgumentError('must not have a query or fragment');
  return value.replace(/\/+$/, '');
}

/** The whole command tree; global options are read by every command through its context. */
export function buildProgram(io: Io, json: boolean): { program: Command; helpShown: () => string | undefined } {
  // With --json, stdout carries one JSON document, the version's and the help's too: commander
  // writes the help in parts (its text, then the text added after it), kept here until the
  // command line ends and written as one `{help}` document (run.ts).
  const versionLine = json ? JSON.stringify({ version: io.version }, null, 2) : io.version;
  let help: string | undefined;
  const program = new Command('herald')
    .description('Herald notification gateway for Solana wallets: the command-line tool')
    .version(versionLine, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--json', 'machine output only: one JSON document on stdout, no colours, no prompts')
    .addOption(new Option('--api-key <key>', 'API key (hrld_live_… or hrld_test_…)').env('HERALD_API_KEY'))
    .addOption(new Option('--base-url <url>', 'gateway address (default http://localhost:3000)').env('HERALD_BASE_URL').argParser(unlessEmpty(parseBaseUrl)))
    .addOption(
      new Option('--max-retries <n>', 'retries on network errors, 5xx and 429 (default 2)').env('HERALD_MAX_RETRIES').argParser(unlessEmpty(integerIn(0, 10))),
    )
    .addOption(new Option('--timeout <ms>', 'limit per request attempt in milliseconds (default 30000)').argParser(integerIn(100, 600_000)))
    .configureHelp({ showGlobalOptions: true })
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      // Commander writes only the version and the help here.
      writeOut: (text) => {
        if (!json || text === `${versionLine}\n`) io.stdout.write(text);
        else help = (help ?? '') + text;
      },
      // In --json mode the caller reports commander's errors (and help shown for one) as JSON instead.
      writeErr: (text) => {
        if (!json) io.stderr.write(text);
      },
    })
    .addHelpText(
      'after',
      `
Exit codes: 0 ok, 1 other error, 2 bad usage or cancelled, 3 not found, 4 auth (401/403),
5 rate-limited after retries, 6 network (refused, timeout, DNS).
Environment: HERALD_API_KEY, HERALD_BASE_URL, HERALD_ADMIN_TOKEN, HERALD_MAX_RETRIES, NO_COLOR.`,
    );

  const contextOf: ContextOf = (command, options) => contextFor(command, io, options);
  registerAuth(program, contextOf);
  registerNotify(program, contextOf);
  registerSchedule(program, contextOf);
  registerBroadcast(program, contextOf);
  registerTemplate(program, contextOf);
  registerSubscription(program, contextOf);
  registerWebhook(program, contextOf);
  registerWallet(program, contextOf);
  registerSandbox(program, contextOf);
  registerReports(program, contextOf);
  registerUsage(program, contextOf);
  registerProtocol(program, contextOf);
  registerRequests(program, contextOf);
  registerDoctor(program, contextOf);
  registerAdmin(program, contextOf);
  return { program, helpShown: () => help };
}
