#!/usr/bin/env node
import { ConfigError, loadConfig, type Config } from './config.js';
import { DataDirLockedError } from './db/data-dir-lock.js';
import { createLogger, startHerald, StartInterrupted } from './runtime.js';

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const log = createLogger(config);
  // A signal during start-up stops it between two steps (StartInterrupted), never in one: a new
  // data dir half-initialised, or a migration cut off, would not open again.
  const starting = new AbortController();
  let herald: Awaited<ReturnType<typeof startHerald>> | undefined;
  let stopping = false;
  const onSignal = (signal: string) => {
    if (herald) return stop(herald, signal);
    if (starting.signal.aborted) return;
    log.info({ signal }, 'stopping once the current start-up step is done');
    starting.abort(signal);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  try {
    herald = await startHerald(config, { logger: log, signal: starting.signal });
  } catch (error) {
    if (error instanceof StartInterrupted) {
      log.info('start-up interrupted; everything it opened is closed');
      process.exit(0);
    }
    // A data dir or address that cannot be used is reported like any bad setting.
    if (error instanceof DataDirLockedError || error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // A signal that came as the last step finished: its name is the abort's reason.
  if (starting.signal.aborted) stop(herald, starting.signal.reason as string);

  function stop(running: NonNullable<typeof herald>, signal: string) {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down: finishing in-flight work');
    const force = setTimeout(() => {
      log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    running.close().then(
      () => {
        log.info('shutdown complete');
        process.exit(0);
      },
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  }
}

main().catch((error) => {
  process.stderr.write(`herald failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
