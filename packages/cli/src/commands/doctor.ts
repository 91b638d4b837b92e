import { HeraldApiError, type Health, type Herald } from '@herald/sdk';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { CliError, EXIT, exitCodeFor, type ExitCode } from '../exit-codes.js';
import { maskKey } from '../output.js';
import type { ContextOf } from './admin.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface DoctorReport {
  ok: boolean;
  baseUrl: string;
  checks: Check[];
  errors: string[];
}

/** Collects checks in order; the first failure decides the exit code. */
class Checklist {
  readonly checks: Check[] = [];
  readonly errors: string[] = [];
  exitCode: ExitCode = EXIT.ok;

  pass(name: string, detail: string) {
    this.checks.push({ name, ok: true, detail });
  }

  fail(name: string, detail: string, exitCode: ExitCode) {
    this.checks.push({ name, ok: false, detail });
    this.errors.push(`${name}: ${detail}`);
    if (this.exitCode === EXIT.ok) this.exitCode = exitCode;
  }
}

async function checkGateway(list: Checklist, herald: Herald, now: () => number): Promise<Health | undefined> {
  const started = now();
  try {
    const health = await pastShortRateLimit(() => herald.health.check());
    list.pass('gateway', `answered in ${now() - started} ms`);
    list.pass('health', `${health.status} (database ${health.database}, role ${health.role})`);
    return health;
  } catch (error) {
    if (!(error instanceof HeraldApiError)) {
      list.fail('gateway', error instanceof Error ? error.message : String(error), exitCodeFor(error));
      return undefined;
    }
    list.pass('gateway', `answered HTTP ${error.statusCode}`);
    // Unhealthy is 1 whatever the status (a 404 means no gateway at that path, not an unknown id); still rate-limited is 5.
    list.fail('health', `${error.code}: ${error.message}`, error.statusCode === 429 ? EXIT.rateLimited : EXIT.error);
    return undefined;
  }
}

/** The longest rate-limit wait doctor sits out: the tier's per-second budget, not a problem. */
const SHORT_RATE_LIMIT_MS = 2000;

/**
 * `call`, once more after a 429 whose Retry-After is a second or two (at most twice): a Developer
 * key allows 2 requests a second, so a doctor run just after another command would otherwise
 * report a healthy key as failing. A longer wait, or a third 429, is reported.
 */
async function pastShortRateLimit<T>(call: () => Promise<T>): Promise<T> {
  for (let waits = 0; ; waits++) {
    try {
      return await call();
    } catch (error) {
      const waitMs = error instanceof HeraldApiError && error.statusCode === 429 ? (error.retryAfterSeconds ?? 1) * 1000 : undefined;
      if (waitMs === undefined || waitMs > SHORT_RATE_LIMIT_MS || waits === 2) throw error;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

async function checkAccount(list: Checklist, herald: Herald, key: string): Promise<void> {
  try {
    const protocol = await pastShortRateLimit(() => herald.account.getProtocol());
    list.pass('apiKey', `${maskKey(key)} belongs to ${protocol.name} (${protocol.id}), tier ${protocol.tier} ${protocol.tier_name}`);
    const usage = await pastShortRateLimit(() => herald.account.getUsage());
    if (usage.remaining > 0) list.pass('quota', `${usage.remaining.toLocaleString('en')} sends left this month (resets ${usage.resetsAt})`);
    else if (usage.overageEnabled) list.pass('quota', 'monthly quota used up; overage is on, so sends go on');
    else list.fail('quota', `monthly quota used up: sends answer 402 until ${usage.resetsAt}`, EXIT.error);
  } catch (error) {
    const name = list.checks.some((c) => c.name === 'apiKey') ? 'quota' : 'apiKey';
    const detail = error instanceof HeraldApiError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
    list.fail(name, detail, exitCodeFor(error));
  }
}

function checkChannels(list: Checklist, health: Health): void {
  for (const [channel, provider] of Object.entries(health.channels)) {
    list.pass(`channel.${channel}`, provider === 'capture' ? 'capture (messages are stored, not sent)' : provider);
  }
}

/** Runs every check it can: later checks are skipped when what they need failed. */
export async function diagnose(context: Context): Promise<{ report: DoctorReport; exitCode: ExitCode }> {
  const list = new Checklist();
  const key = context.apiKey?.value;
  // Quick answers matter more than persistence here: a doctor that retries hides the symptom.
  const herald = context.heraldWith(key, { maxRetries: 0, timeoutMs: 5000 });
  const health = await checkGateway(list, herald, Date.now);
  const reachable = list.checks.some((c) => c.name === 'gateway' && c.ok);
  if (reachable) {
    if (key) await checkAccount(list, herald, key);
    else list.fail('apiKey', 'no API key: pass --api-key, set HERALD_API_KEY or run `herald auth login`', EXIT.auth);
  }
  if (health) checkChannels(list, health);
  const report = { ok: list.errors.length === 0, baseUrl: context.baseUrl, checks: list.checks, errors: list.errors };
  return { report, exitCode: list.exitCode };
}

/** `herald doctor`: is the gateway reachable and healthy, is the key good, is there quota left. */
export function registerDoctor(program: Command, contextOf: ContextOf): void {
  program
    .command('doctor')
    .description('check the gateway, /health, your API key, quota left and each channel provider')
    .action(async (_flags: unknown, command: Command) => {
      const context = contextOf(command);
      const { report, exitCode } = await diagnose(context);
      const { out } = context;
      out.result(report, () => {
        out.line(`Herald doctor: ${report.baseUrl}`);
        const width = Math.max(...report.checks.map((c) => c.name.length));
        for (const check of report.checks) {
          const mark = check.ok ? out.style.green('✓') : out.style.red('✗');
          out.line(`  ${mark} ${check.name.padEnd(width)}  ${check.detail}`);
        }
      });
      if (!report.ok) {
        const failed = report.checks.filter((c) => !c.ok).length;
        throw new CliError(exitCode, 'DOCTOR_FAILED', `${failed} of the ${report.checks.length} checks run failed (a check is skipped when one it needs failed)`);
      }
    });
}
