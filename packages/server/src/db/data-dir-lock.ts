import { linkSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly holderPid: number,
  ) {
    super(`Data directory ${dir} is in use by another Herald process (pid ${holderPid}); PGlite allows one process per directory.`);
  }
}

// Lock files this process holds. A lock naming our own pid that is not in here was left by an
// earlier process that had the same pid: containers restart with the same pids, and refusing
// that lock would keep a crashed server down for good.
const heldHere = new Set<string>();

/**
 * Who a process is beyond its pid, which the system hands out again: the boot and the process's
 * start time since it (Linux, /proc); undefined elsewhere. A lock left by a process that died
 * names a pid another process may hold by now (after a restart, often the new gateway's own
 * parent): only the same pid with the same start is the holder.
 */
function identityOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name start with the state (field 3); the start time is field 22.
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return startTime && boot ? `${boot} ${startTime}` : undefined;
  } catch {
    return undefined;
  }
}

/** What this process writes in its lock file: its pid, and on Linux its identity on a second line. */
const OWN_LOCK = [process.pid, identityOf(process.pid)].filter((part) => part !== undefined).join('\n');

function isHeld(holder: Holder, lockFile: string): boolean {
  if (holder.pid === process.pid) return heldHere.has(lockFile);
  if (!isAlive(holder.pid)) return false;
  // A lock written without an identity (another system, an older gateway) goes by the pid alone.
  const now = holder.identity === undefined ? undefined : identityOf(holder.pid);
  return now === undefined || now === holder.identity;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * A process killed with SIGKILL stays a zombie until its parent reaps it (a second or so under a
 * supervisor that restarts at once): signal 0 still reaches it, but it holds nothing. Linux says
 * so in /proc/<pid>/stat (state Z, after the command name); elsewhere it counts as alive.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** A short pause in synchronous code (the lock is taken before anything else runs). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

interface Holder {
  pid: number;
  identity?: string;
}

/** Who a lock file names: pid 0 when it holds none (left half written); undefined when there is no file. */
function holderIn(file: string): Holder | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const [first, identity] = text.split('\n');
  const pid = Number(first);
  if (!Number.isInteger(pid) || pid <= 0) return { pid: 0 };
  return identity ? { pid, identity } : { pid };
}

/** The pid a lock file names; 0 when it holds none (left half written); undefined when there is no file. */
function pidIn(file: string): number | undefined {
  return holderIn(file)?.pid;
}

/** How long a start waits for another process taking over the same stale lock. */
const TAKEOVER_WAIT_MS = 2000;
const TAKEOVER_PAUSE_MS = 10;

/**
 * Takes an exclusive lock on a PGlite data directory: a lock file holding our pid, created with an
 * atomic link(2) so two starting processes cannot both win. A lock left by a dead process is taken
 * over under a second lock file, the guard (link(2) again): only its holder removes the stale lock,
 * and only after reading it again. Without the guard, two processes that both found the lock
 * stale could each remove it, the second removing the first one's fresh lock, and both would run.
 * Returns the release function.
 */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lockFile = path.join(dir, 'herald.lock');
  const guard = `${lockFile}.takeover`;
  const candidate = `${lockFile}.${process.pid}`;
  writeFileSync(candidate, OWN_LOCK);
  const deadline = Date.now() + TAKEOVER_WAIT_MS;
  try {
    for (;;) {
      try {
        linkSync(candidate, lockFile);
        return holding(lockFile);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = holderIn(lockFile);
      if (holder?.pid && isHeld(holder, lockFile)) throw new DataDirLockedError(dir, holder.pid);
      if (Date.now() > deadline) throw new DataDirLockedError(dir, holder?.pid ?? 0);
      // Released meanwhile: link again.
      if (holder === undefined) continue;
      if (takeOverStale(lockFile, guard, candidate, holder.pid)) return holding(lockFile);
      pause(TAKEOVER_PAUSE_MS);
    }
  } finally {
    unlinkSync(candidate);
  }
}

/**
 * Under the guard: replaces the lock when it still names the dead `stale` pid (or nothing), and
 * links ours. False when the guard is someone else's, or the lock changed meanwhile: look again.
 */
export function takeOverStale(lockFile: string, guard: string, candidate: string, stale: number): boolean {
  try {
    linkSync(candidate, guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A guard whose holder died mid-takeover is removed; the next look takes the guard. One that
    // is gone already is no one's to remove: another process may be taking it at this moment.
    const guardHolder = pidIn(guard);
    if (guardHolder !== undefined && (guardHolder === 0 || guardHolder === process.pid || !isAlive(guardHolder))) rmSync(guard, { force: true });
    return false;
  }
  try {
    // Only the stale lock is removed; one that is gone or names someone else is looked at again.
    if (pidIn(lockFile) !== stale) return false;
    rmSync(lockFile, { force: true });
    try {
      linkSync(candidate, lockFile);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  } finally {
    rmSync(guard, { force: true });
  }
}

/** Marks the lock as ours and returns its release. */
function holding(lockFile: string): () => void {
  heldHere.add(lockFile);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldHere.delete(lockFile);
    try {
      if (readFileSync(lockFile, 'utf8') === OWN_LOCK) unlinkSync(lockFile);
    } catch {
      // already gone
    }
  };
}
