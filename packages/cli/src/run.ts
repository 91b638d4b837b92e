import { HeraldApiError, HeraldNetworkError } from '@herald/sdk';
import { CommanderError, type Command } from 'commander';
import { earlyOutput, type Io } from './context.js';
import { EXIT, exitCodeFor, usageError } from './exit-codes.js';
import { interruption } from './interruption.js';
import { buildProgram } from './program.js';

/** The hint under an error, for people; `ran` is the command that failed (`auth login`), when one ran. */
function hintFor(error: unknown, ran: string | undefined): string | undefined {
  if (error instanceof HeraldNetworkError) return 'Is the gateway running there? Set --base-url or HERALD_BASE_URL.';
  if (!(error instanceof HeraldApiError)) return undefined;
  if (error.code === 'INVALID_ADMIN_TOKEN') return 'Check --admin-token or HERALD_ADMIN_TOKEN.';
  // Login checks the key it was given: running login again with the same key is no remedy.
  if (error.statusCode === 401 && ran === 'auth login') return 'The gateway refused this key: check that it is whole, and that it is a key of the gateway at --base-url.';
  if (error.statusCode === 401) return 'Check --api-key or HERALD_API_KEY, or run `herald auth login`.';
  if (error.statusCode === 429) return 'Still rate-limited after retries: slow down, or move the protocol to a higher tier.';
  return undefined;
}

/**
 * `herald help notify send` as `herald notify send --help`: commander's help command looks one
 * level down only, and would show the help of `notify`. Other command lines are left as they are.
 */
function nestedHelp(argv: string[], commands: string[]): string[] {
  const at = argv.indexOf('help');
  if (at === -1) return argv;
  const after = argv.slice(at + 1);
  const words = after.filter((word) => !word.startsWith('-'));
  // Flags after the path (--json) stay; an option with a value there is not a help request.
  if (words.length < 2 || after.some((word) => word.startsWith('-') && word !== '--json')) return argv;
  // `help` must be the command itself, not an option's value after one (notify send --subject help …).
  if (argv.slice(0, at).some((word) => commands.includes(word))) return argv;
  return [...argv.slice(0, at), ...after, '--help'];
}

/** Runs one command line and returns the exit code; every error is reported here, once. */
export async function run(argv: string[], io: Io): Promise<number> {
  const out = earlyOutput(argv, io);
  interruption.watch(out);
  const { program, helpShown } = buildProgram(io, out.json);
  let ran: string | undefined;
  program.hook('preAction', (_program: Command, action: Command) => {
    ran = `${action.parent?.parent ? `${action.parent.name()} ` : ''}${action.name()}`;
  });
  try {
    await program.parseAsync(
      nestedHelp(
        argv,
        program.commands.map((command) => command.name()),
      ),
      { from: 'user' },
    );
    return EXIT.ok;
  } catch (error) {
    const exitCode = exitCodeFor(error);
    if (error instanceof CommanderError) {
      // --json and the help asked for: the help as one JSON document.
      const help = helpShown();
      if (help !== undefined && exitCode === EXIT.ok) out.result({ help }, () => {});
      // Commander has already printed its message (or the help) unless --json silenced it.
      if (exitCode !== EXIT.ok && out.json) {
        const message = error.code === 'commander.help' ? 'No command given: see `herald --help`' : error.message.replace(/^error: /, '');
        out.error(usageError(message));
      }
      return exitCode;
    }
    out.error(error, hintFor(error, ran));
    return exitCode;
  }
}
