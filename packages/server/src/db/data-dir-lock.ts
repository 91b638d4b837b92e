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

function isHeld(pid: number, lockFile: string): boolean {
  return pid === process.pid ? heldHere.has(lockFile) : isAlive(pid);
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

/** The pid a lock file names; 0 when it holds none (left half written); undefined when there is no file. */
function pidIn(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const pid = Number(text);
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
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
  writeFileSync(candidate, String(process.pid));
  const deadline = Date.now() + TAKEOVER_WAIT_MS;
  try {
    for (;;) {
      try {
        linkSync(candidate, lockFile);
        return holding(lockFile);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = pidIn(lockFile);
      if (holder && isHeld(holder, lockFile)) throw new DataDirLockedError(dir, holder);
      if (Date.now() > deadline) throw new DataDirLockedError(dir, holder ?? 0);
      // Released meanwhile: link again.
      if (holder === undefined) continue;
      if (takeOverStale(lockFile, guard, candidate, holder)) return holding(lockFile);
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
      if (readFileSync(lockFile, 'utf8') === String(process.pid)) unlinkSync(lockFile);
    } catch {
      // already gone
    }
  };
}
