import { Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { registerAdminIdentities } from './admin-identities.js';
import { registerAdminKeys } from './admin-keys.js';
import { registerAdminProtocols } from './admin-protocols.js';
import { registerAdminSandbox } from './sandbox.js';

/** The context of a command; logout ignores the config file, so it can clear a corrupt one. */
export type ContextOf = (command: Command, options?: { ignoreConfigFile?: boolean }) => Context;

/** `herald admin …`: the operator's commands, authenticated with the gateway's admin token. */
export function registerAdmin(program: Command, contextOf: ContextOf): void {
  const admin = program
    .command('admin')
    .description("operator commands: the gateway's admin API")
    .addOption(new Option('--admin-token <token>', 'the gateway admin token').env('HERALD_ADMIN_TOKEN'));
  registerAdminProtocols(admin, contextOf);
  registerAdminKeys(admin, contextOf);
  registerAdminIdentities(admin, contextOf);
  registerAdminSandbox(admin, contextOf);
}

/** The admin client for a command below `herald admin`. */
export function adminClient(command: Command, contextOf: ContextOf) {
  const context = contextOf(command);
  return { context, admin: context.admin(command.optsWithGlobals<{ adminToken?: string }>().adminToken) };
}
