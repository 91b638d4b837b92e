import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
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

/**
 * Takes an exclusive lock on a PGlite data directory: a lock file holding our pid, created with an
 * atomic link(2) so two starting processes cannot both win. A lock left by a dead process is taken
 * over. Returns the release function.
 */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lockFile = path.join(dir, 'herald.lock');
  const candidate = `${lockFile}.${process.pid}`;
  writeFileSync(candidate, String(process.pid));
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(candidate, lockFile);
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
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = Number(readFileSync(lockFile, 'utf8'));
        if (Number.isInteger(holder) && holder > 0 && isHeld(holder, lockFile)) throw new DataDirLockedError(dir, holder);
        unlinkSync(lockFile);
      }
    }
    throw new DataDirLockedError(dir, Number(readFileSync(lockFile, 'utf8')));
  } finally {
    unlinkSync(candidate);
  }
}
