import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DataDirLockedError, lockDataDir, takeOverStale } from '../../packages/server/src/db/data-dir-lock.js';
import { call, onPostgres } from '../support/gateway.js';
import { ensureBuilt, killStrays, spawnServer, type ServerProcess } from './server-process.js';

const TOKEN_LINE = /Herald admin token \(shown once, kept in (.+)\): (hrld_admin_[A-Za-z0-9]+)/g;

function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  assert.throws(() => process.kill(pid, 0), 'the pid is free');
  return pid;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe('embedded data directory (PGlite)', { skip: onPostgres && 'the data-dir lock and generated token exist only without DATABASE_URL' }, () => {
  let dir: string;
  let first: ServerProcess;
  let url: string;
  let token: string;

  before(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(os.tmpdir(), 'herald-embedded-'));
  });
  after(async () => {
    await killStrays();
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates an admin token on first start, prints it once and keeps it in a 0600 file', async () => {
    first = spawnServer({ HERALD_DATA_DIR: dir });
    url = await first.listening();
    const printed = [...first.stdout().matchAll(TOKEN_LINE)];
    assert.equal(printed.length, 1, first.stdout());
    const [, file, value] = printed[0];
    token = value;
    assert.equal(file, path.join(dir, 'admin-token'));
    assert.equal(readFileSync(file, 'utf8').trim(), token);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(path.join(dir, 'encryption.key')).mode & 0o777, 0o600);
    assert.equal(first.stdout().split(token).length - 1, 1, 'the token appears once, in no log line');
    assert.ok(!first.stderr().includes(token));

    const created = await call(url, token, 'POST', '/v1/admin/protocols', { name: 'Embedded', tier: 1 });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await call(url, created.body.apiKey, 'GET', '/v1/protocols/me')).body.name, 'Embedded');
    assert.equal((await call(url, 'hrld_admin_' + 'x'.repeat(40), 'GET', '/v1/admin/protocols')).status, 401);
  });

  it('refuses a second process on the same directory, naming the directory and the holder', async () => {
    const second = spawnServer({ HERALD_DATA_DIR: dir });
    const exit = await withTimeout(second.exited, 30_000, 'the refused process exiting');
    assert.notEqual(exit.code, 0);
    assert.equal(exit.code, 1);
    assert.ok(second.stderr().includes(dir), second.stderr());
    assert.match(second.stderr(), new RegExp(`pid ${first.pid}\\b`));
    assert.ok(!second.stdout().includes('herald listening'));
    // The holder is unaffected.
    assert.equal((await call(url, undefined, 'GET', '/health')).status, 200);
    assert.equal(readFileSync(path.join(dir, 'herald.lock'), 'utf8').split('\n')[0], String(first.pid));
  });

  it('lets the next process start once the first has exited, without printing the token again', async () => {
    const exit = await withTimeout(first.stop('SIGTERM'), 30_000, 'shutdown');
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(!existsSync(path.join(dir, 'herald.lock')), 'the lock is released on exit');

    const next = spawnServer({ HERALD_DATA_DIR: dir });
    const nextUrl = await next.listening();
    assert.ok(!next.stdout().includes('admin token'), next.stdout());
    assert.ok(!next.stdout().includes(token));
    const list = await call(nextUrl, token, 'GET', '/v1/admin/protocols');
    assert.equal(list.status, 200, 'the stored token still works');
    assert.deepEqual(
      list.body.data.map((p: any) => p.name),
      ['Embedded'],
      'the data survived the restart',
    );
    assert.deepEqual(await withTimeout(next.stop('SIGINT'), 30_000, 'shutdown'), { code: 0, signal: null });
  });

  it('refuses to start with an encryption key other than the one the data was sealed with', async () => {
    const other = spawnServer({ HERALD_DATA_DIR: dir, HERALD_ENCRYPTION_KEY: 'b'.repeat(64) });
    const exit = await withTimeout(other.exited, 60_000, 'the refused process exiting');
    assert.deepEqual(exit, { code: 1, signal: null }, other.stderr());
    assert.match(other.stderr(), /^Invalid configuration: HERALD_ENCRYPTION_KEY does not open the key check in this database/);
    assert.ok(!other.stdout().includes('herald listening'));
    assert.ok(!existsSync(path.join(dir, 'herald.lock')), 'the refused process released the directory');
  });
});

describe('a signal during the first start', { skip: onPostgres && 'embedded starts only' }, () => {
  after(() => killStrays());

  it('stops the start between two steps, so the new data directory opens on the next start', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-interrupted-'));
    try {
      const first = spawnServer({ HERALD_DATA_DIR: dir });
      // The token line is printed as the new data dir's store is about to be created.
      await withTimeout(
        new Promise<void>((resolve) => {
          const poll = setInterval(() => first.stdout().includes('Herald admin token') && (clearInterval(poll), resolve()), 5);
        }),
        60_000,
        'the token line',
      );
      const exit = await withTimeout(first.stop('SIGINT'), 60_000, 'the interrupted start');
      assert.deepEqual(exit, { code: 0, signal: null }, first.stderr());
      const messages = first
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line).msg);
      // Interrupted between steps; or, on a machine fast enough, started and then shut down.
      if (!messages.includes('herald listening')) assert.ok(messages.includes('start-up interrupted; everything it opened is closed'), messages.join('\n'));
      assert.ok(!existsSync(path.join(dir, 'herald.lock')), 'the lock is released');

      const next = spawnServer({ HERALD_DATA_DIR: dir });
      const url = await next.listening();
      assert.equal((await call(url, undefined, 'GET', '/health')).status, 200);
      assert.ok(!next.stdout().includes('Herald admin token'), 'the token of the interrupted start is kept');
      assert.deepEqual(await withTimeout(next.stop('SIGTERM'), 30_000, 'shutdown'), { code: 0, signal: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('start-up settings that cannot be used', { skip: onPostgres && 'embedded starts only' }, () => {
  let dir: string;
  before(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(os.tmpdir(), 'herald-unusable-'));
  });
  after(async () => {
    await killStrays();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Exit 1 with one line naming the variable, and no stack trace. */
  async function refused(env: Record<string, string>, variable: string) {
    const server = spawnServer(env);
    const exit = await withTimeout(server.exited, 60_000, 'the refused process exiting');
    assert.deepEqual(exit, { code: 1, signal: null }, server.stderr());
    assert.match(server.stderr(), new RegExp(`^Invalid configuration: ${variable} `), server.stderr());
    assert.ok(!/\n\s+at /.test(server.stderr()), `no stack trace: ${server.stderr()}`);
    assert.ok(!server.stdout().includes('herald listening'));
    // An in-memory admin token would die with this process: it is not shown.
    if (env.HERALD_DATA_DIR === 'memory://') assert.ok(!server.stdout().includes('Herald admin token'), server.stdout());
    return server;
  }

  it('names the data dir and the file when a kept secret is damaged or the key is missing, rather than making another', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-secrets-'));
    try {
      const first = spawnServer({ HERALD_DATA_DIR: dir });
      await first.listening();
      assert.deepEqual(await withTimeout(first.stop('SIGTERM'), 30_000, 'shutdown'), { code: 0, signal: null });
      const key = readFileSync(path.join(dir, 'encryption.key'), 'utf8');
      const token = readFileSync(path.join(dir, 'admin-token'), 'utf8');

      writeFileSync(path.join(dir, 'encryption.key'), 'zz\n');
      let server = await refused({ HERALD_DATA_DIR: dir }, 'HERALD_DATA_DIR');
      assert.match(server.stderr(), /encryption\.key, which is not a key of 64 hex characters/);

      rmSync(path.join(dir, 'encryption.key'));
      server = await refused({ HERALD_DATA_DIR: dir }, 'HERALD_DATA_DIR');
      assert.match(server.stderr(), /holds a database but no encryption\.key/);
      assert.ok(!existsSync(path.join(dir, 'encryption.key')), 'no new key was made');

      writeFileSync(path.join(dir, 'encryption.key'), key);
      writeFileSync(path.join(dir, 'admin-token'), 'short\n');
      server = await refused({ HERALD_DATA_DIR: dir }, 'HERALD_DATA_DIR');
      assert.match(server.stderr(), /admin-token, which is not an admin token/);

      writeFileSync(path.join(dir, 'admin-token'), token);
      const restored = spawnServer({ HERALD_DATA_DIR: dir });
      await restored.listening();
      assert.deepEqual(await withTimeout(restored.stop('SIGTERM'), 30_000, 'shutdown'), { code: 0, signal: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names HERALD_DATA_DIR when it is a file, not a directory', async () => {
    const file = path.join(dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const server = await refused({ HERALD_DATA_DIR: file }, 'HERALD_DATA_DIR');
    assert.ok(server.stderr().includes(file));
  });

  it('names PORT when the port is taken, and HOST when it is no address of this machine', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as net.AddressInfo).port);
      await refused({ HERALD_DATA_DIR: 'memory://', PORT: port }, 'PORT');
    } finally {
      taken.close();
    }
    // TEST-NET-1 (RFC 5737): never assigned to this machine
    await refused({ HERALD_DATA_DIR: 'memory://', HOST: '192.0.2.1' }, 'HOST');
  });

  it('prints an admin token for an in-memory start without HERALD_ADMIN_TOKEN, so the admin API works', async () => {
    const server = spawnServer({ HERALD_DATA_DIR: 'memory://' });
    const url = await server.listening();
    const [, token] = /Herald admin token \(in memory: valid until this process exits\): (hrld_admin_[A-Za-z0-9]+)/.exec(server.stdout()) ?? [];
    assert.ok(token, server.stdout());
    assert.equal(server.stdout().split(token).length - 1, 1, 'printed once, in no log line');
    const created = await call(url, token, 'POST', '/v1/admin/protocols', { name: 'Throwaway', tier: 0 });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(await withTimeout(server.stop('SIGTERM'), 30_000, 'shutdown'), { code: 0, signal: null });
  });

  it('warns that a role other than all on the embedded store leaves the other role to no one', async () => {
    for (const [role, says] of [
      ['api', /sends are accepted but nothing delivers them/],
      ['worker', /nothing can send to it/],
    ] as const) {
      const server = spawnServer({ HERALD_DATA_DIR: 'memory://', HERALD_ROLE: role, HERALD_ADMIN_TOKEN: 'embedded-role-admin-token' });
      // The warning is logged before the process listens or starts its loops.
      await withTimeout(
        (async () => {
          while (!server.stdout().includes('"herald background loops running"') && !server.stdout().includes('"herald listening"')) await new Promise((r) => setTimeout(r, 50));
        })(),
        90_000,
        `${role} start`,
      );
      const lines = server
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'));
      const at = lines.findIndex((line) => {
        const entry = JSON.parse(line);
        return entry.level === 40 && entry.role === role && says.test(entry.msg);
      });
      assert.ok(at !== -1, server.stdout());
      assert.match(JSON.parse(lines[at]).msg, /use HERALD_ROLE=all, or DATABASE_URL to split roles$/);
      // One role member: a JSON reader may refuse a line that names a member twice.
      assert.equal(lines[at].match(/"role":/g)?.length, 1, lines[at]);
      assert.deepEqual(await withTimeout(server.stop('SIGTERM'), 30_000, 'shutdown'), { code: 0, signal: null });
    }
  });
});

describe('lockDataDir', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'herald-lock-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  // The server calls this before opening PGlite; a process start would only add PGlite's start-up time.
  it('takes over a lock file left by a process that died', () => {
    const lockFile = path.join(dir, 'herald.lock');
    writeFileSync(lockFile, String(deadPid()));
    const release = lockDataDir(dir);
    assert.equal(readFileSync(lockFile, 'utf8').split('\n')[0], String(process.pid));
    release();
    assert.ok(!existsSync(lockFile));
  });

  it('takes over a lock held by a process killed and not yet reaped (a zombie)', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
    const lockFile = path.join(dir, 'herald.lock');
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await new Promise((resolve) => child.once('spawn', resolve));
    writeFileSync(lockFile, String(child.pid));
    child.kill('SIGKILL');
    // Synchronously, so this process (its parent) cannot reap it meanwhile: it stays a zombie.
    const state = () => {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    };
    const until = Date.now() + 5000;
    while (state() !== 'Z' && Date.now() < until);
    assert.equal(state(), 'Z');
    const release = lockDataDir(dir);
    assert.equal(readFileSync(lockFile, 'utf8').split('\n')[0], String(process.pid));
    release();
  });

  it('refuses a lock held by a live process, naming the directory and its pid', () => {
    const lockFile = path.join(dir, 'herald.lock');
    writeFileSync(lockFile, String(process.ppid));
    try {
      assert.throws(
        () => lockDataDir(dir),
        (error: unknown) => error instanceof DataDirLockedError && error.holderPid === process.ppid && error.message.includes(dir) && error.message.includes(`pid ${process.ppid}`),
      );
      assert.equal(readFileSync(lockFile, 'utf8'), String(process.ppid), 'the holder keeps its lock');
    } finally {
      rmSync(lockFile);
    }
  });

  it('takes over a lock whose pid now belongs to another process, and refuses one whose holder is still that process', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
    const lockFile = path.join(dir, 'herald.lock');
    const other = spawn('sleep', ['30']);
    await new Promise((resolve) => other.once('spawn', resolve));
    try {
      const stat = readFileSync(`/proc/${other.pid}/stat`, 'utf8');
      const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      // Written by that very process: it holds the directory.
      writeFileSync(lockFile, `${other.pid}\n${boot} ${startTime}`);
      assert.throws(() => lockDataDir(dir), (error: unknown) => error instanceof DataDirLockedError && error.holderPid === other.pid);
      // Written by a gateway that died, whose pid the sleep was given since: stale.
      writeFileSync(lockFile, `${other.pid}\n${boot} ${Number(startTime) - 1}`);
      const release = lockDataDir(dir);
      assert.equal(readFileSync(lockFile, 'utf8').split('\n')[0], String(process.pid));
      release();
      assert.ok(!existsSync(lockFile));
    } finally {
      other.kill();
    }
  });

  it('refuses a second lock on a directory this process already holds', () => {
    const release = lockDataDir(dir);
    try {
      assert.throws(
        () => lockDataDir(dir),
        (error: unknown) => error instanceof DataDirLockedError && error.holderPid === process.pid && error.message.includes(dir),
      );
    } finally {
      release();
    }
    assert.ok(!existsSync(path.join(dir, 'herald.lock')));
    lockDataDir(dir)();
  });

  it('takes over a lock naming our pid that an earlier incarnation left (a restarted container)', () => {
    writeFileSync(path.join(dir, 'herald.lock'), String(process.pid));
    const release = lockDataDir(dir);
    assert.throws(() => lockDataDir(dir), DataDirLockedError);
    release();
  });

  it('takes over an empty or unreadable lock file', () => {
    writeFileSync(path.join(dir, 'herald.lock'), '');
    lockDataDir(dir)();
    writeFileSync(path.join(dir, 'herald.lock'), 'garbage');
    lockDataDir(dir)();
  });

  it('never removes a lock another process took over from the same dead holder', () => {
    const lockFile = path.join(dir, 'herald.lock');
    const stale = deadPid();
    writeFileSync(lockFile, String(stale));
    // This process takes the stale lock over first...
    const release = lockDataDir(dir);
    try {
      // ...then a second one that had also read the dead pid takes its turn: it must look again, not remove ours.
      const candidate = `${lockFile}.other`;
      writeFileSync(candidate, '4194000');
      assert.equal(takeOverStale(lockFile, `${lockFile}.takeover`, candidate, stale), false);
      rmSync(candidate);
      assert.equal(readFileSync(lockFile, 'utf8').split('\n')[0], String(process.pid), 'our lock stands');
      // Waiting for a guard another live process holds: it looks again later, and never takes over meanwhile.
      writeFileSync(`${lockFile}.takeover`, String(process.ppid));
      assert.equal(takeOverStale(lockFile, `${lockFile}.takeover`, lockFile, stale), false);
      assert.equal(readFileSync(`${lockFile}.takeover`, 'utf8'), String(process.ppid));
      rmSync(`${lockFile}.takeover`);
      // A lock released meanwhile (no file) is no one's to remove, even for a taker whose holder read as none.
      const theirs = `${lockFile}.theirs`;
      writeFileSync(theirs, String(process.ppid));
      assert.equal(takeOverStale(lockFile, `${lockFile}.takeover`, theirs, 0), false, 'our lock names us, not "none"');
      assert.equal(readFileSync(lockFile, 'utf8').split('\n')[0], String(process.pid));
      rmSync(theirs);
    } finally {
      release();
    }
  });

  it('lets exactly one of several processes starting at once take a stale lock', async () => {
    const lockFile = path.join(dir, 'herald.lock');
    const module = new URL('../../packages/server/src/db/data-dir-lock.ts', import.meta.url).href;
    for (let round = 0; round < 3; round++) {
      writeFileSync(lockFile, String(deadPid()));
      const at = Date.now() + 1500;
      // Each says whether it got the lock, then holds it until told to stop (its stdin ends), so
      // one that started late still finds the winner alive.
      const script = `const { lockDataDir } = await import(${JSON.stringify(module)});
        while (Date.now() < ${at});
        try { lockDataDir(${JSON.stringify(dir)}); console.log('GOT'); } catch { console.log('REFUSED'); }
        process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
      const children = Array.from({ length: 4 }, () => spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]));
      const outcomes = await Promise.all(
        children.map((child) => new Promise<string>((resolve) => {
          let out = '';
          child.stdout.on('data', (chunk) => {
            out += chunk;
            if (out.includes('\n')) resolve(out.trim());
          });
          child.on('close', () => resolve(out.trim()));
        })),
      );
      await Promise.all(children.map((child) => new Promise((resolve) => (child.on('close', resolve), child.stdin.end()))));
      assert.equal(outcomes.filter((o) => o === 'GOT').length, 1, `round ${round}: ${outcomes.join(', ')}`);
      assert.equal(outcomes.filter((o) => o === 'REFUSED').length, 3, `round ${round}: ${outcomes.join(', ')}`);
    }
  });

  it('leaves no candidate files behind', () => {
    lockDataDir(dir)();
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.startsWith('herald.lock')),
      [],
    );
  });
});
