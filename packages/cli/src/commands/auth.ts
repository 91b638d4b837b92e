import type { Command } from 'commander';
import type { Context } from '../context.js';
import { removeConfig, writeConfig } from '../config-file.js';
import { usageError } from '../exit-codes.js';
import { maskKey } from '../output.js';
import { askSecret, canPrompt, readStdin } from '../prompt.js';
import type { ContextOf } from './admin.js';

const SOURCES = { flag: 'the --api-key flag', env: 'HERALD_API_KEY', config: 'the config file', default: 'a default' };

async function keyToSave(context: Context, withToken: boolean | undefined): Promise<string> {
  let key: string | undefined;
  if (withToken) key = (await readStdin(context.io.stdin)).trim();
  else if (context.apiKey && context.apiKey.source !== 'config') key = context.apiKey.value;
  else if (canPrompt(context.io, context.json)) key = await askSecret(context.io, 'Paste your API key (hrld_live_… or hrld_test_…): ');
  else throw usageError('No API key given: pass --api-key, set HERALD_API_KEY, or pipe it in with --with-token');
  if (!key) throw usageError('The API key is empty');
  return key;
}

const environmentOf = (key: string) => (key.startsWith('hrld_test_') ? 'sandbox' : 'production');

/** `herald auth login | logout | whoami`: the API key kept in the config file. */
export function registerAuth(program: Command, contextOf: ContextOf): void {
  const auth = program.command('auth').description('save, show or forget your API key');

  auth
    .command('login')
    .description('check an API key against the gateway and save it (with the base URL) in the config file')
    .option('--with-token', 'read the API key from standard input')
    .action(async (flags: { withToken?: boolean }, command: Command) => {
      const context = contextOf(command);
      const key = await keyToSave(context, flags.withToken);
      const protocol = await context.heraldWith(key).account.getProtocol();
      writeConfig(context.configFile, { apiKey: key, baseUrl: context.baseUrl });
      const { out } = context;
      const result = { loggedIn: true, baseUrl: context.baseUrl, apiKey: maskKey(key), environment: environmentOf(key), configPath: context.configFile, protocol };
      out.result(result, () => {
        out.line(out.style.green(`Logged in to ${context.baseUrl} as ${protocol.name} (${protocol.id})`));
        out.line(`Saved ${maskKey(key)} to ${context.configFile}`);
      });
    });

  auth
    .command('logout')
    .description('delete the saved API key')
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command, { ignoreConfigFile: true });
      const removed = removeConfig(context.configFile);
      const { out } = context;
      out.result({ loggedOut: removed, configPath: context.configFile }, () =>
        out.line(removed ? `Removed ${context.configFile}` : `Not logged in: there is no ${context.configFile}`),
      );
      if (context.io.env.HERALD_API_KEY) out.note('HERALD_API_KEY is still set in this environment and is used when present.');
    });

  auth
    .command('whoami')
    .description('the protocol your API key belongs to, and where the key comes from')
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command);
      const protocol = await context.herald().account.getProtocol();
      const key = context.apiKey!;
      const { out } = context;
      const result = {
        baseUrl: context.baseUrl,
        apiKey: maskKey(key.value),
        environment: environmentOf(key.value),
        keySource: key.source,
        configPath: context.configFile,
        protocol,
      };
      out.result(result, () => {
        out.line(`Logged in to ${context.baseUrl} as ${out.style.bold(protocol.name)} (${protocol.id}), tier ${protocol.tier} ${protocol.tier_name}`);
        const from = key.source === 'config' ? `${SOURCES.config} ${context.configFile}` : SOURCES[key.source];
        out.line(`${environmentOf(key.value)} key ${maskKey(key.value)}, from ${from}`);
      });
    });
}
