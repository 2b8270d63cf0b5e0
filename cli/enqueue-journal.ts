import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '@local/state';

/**
 * A write-ahead journal of `payouts enqueue`, so that a run stopped at any point (Ctrl-C, SIGTERM, a
 * crash, a kill) can be completed by running the same command again.
 *
 * Before a batch's payouts are recorded, their identities are appended as `+<key>`; once each row is
 * sent (or found to need no message), `-<key>`. A key with a `+` and no `-` is a payout this CLI may
 * have recorded ACCEPTED without sending its message. The next run for the same target reads the
 * journals of runs that are no longer alive and sends those rows again if their payout is still
 * ACCEPTED. A second message for a payout is harmless (the worker deduplicates by payout identity and
 * never calls Payout twice); a payout recorded with no message would wait for the reconciler's
 * review instead of being paid.
 *
 * Each run writes its own file (`<target>.<pid>.<start>.journal`), so runs side by side never touch
 * each other's; a run deletes its own file when it ends with nothing pending, and the file of an
 * earlier run once every row it left pending is settled.
 */
export interface EnqueueJournal {
  /** True when an earlier, stopped run recorded this payout and may not have sent its message. */
  wasLeftUnsent(key: string): boolean;
  /** Appends `+` for rows about to be recorded (synchronously: it is on disk before the writes start). */
  recording(keys: readonly string[]): void;
  /** Appends `-` for rows sent or needing no message. */
  settled(keys: readonly string[]): void;
  /**
   * Ends the run: removes this run's file when nothing is pending, and the files of earlier runs whose
   * rows are all settled (the others are rewritten with what is still pending).
   * @returns how many rows earlier runs left unsent that this run did not settle (not in its file).
   */
  close(): { readonly pendingFromEarlierRuns: number };
}

interface EarlierJournal {
  readonly path: string;
  readonly pending: Set<string>;
}

/** The keys a journal file leaves pending: `+` lines with no later `-` line. */
function pendingIn(text: string): Set<string> {
  const pending = new Set<string>();
  for (const line of text.split('\n')) {
    if (line.startsWith('+')) pending.add(line.slice(1));
    else if (line.startsWith('-')) pending.delete(line.slice(1));
  }
  return pending;
}

/**
 * Opens the journal of one run against one target (`targetId`: what tells the stack apart, such as
 * its table name and queue URL) in `dir`, reading what earlier runs against it left pending.
 */
export function openEnqueueJournal(dir: string, targetId: string): EnqueueJournal {
  mkdirSync(dir, { recursive: true });
  const prefix = `${createHash('sha256').update(targetId).digest('hex').slice(0, 16)}.`;
  const earlier: EarlierJournal[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith('.journal')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) continue; // a run still going
    const path = join(dir, name);
    earlier.push({ path, pending: pendingIn(readFileSync(path, 'utf8')) });
  }
  const ownPath = join(dir, `${prefix}${process.pid}.${Date.now()}.journal`);
  let fd: number | undefined;
  const own = new Set<string>();
  const append = (mark: '+' | '-', keys: readonly string[]): void => {
    if (keys.length === 0) return;
    fd ??= openSync(ownPath, 'a', 0o600);
    writeSync(fd, keys.map((k) => `${mark}${k}\n`).join(''));
  };
  return {
    wasLeftUnsent(key) {
      return earlier.some((j) => j.pending.has(key));
    },
    recording(keys) {
      append('+', keys);
      for (const k of keys) own.add(k);
    },
    settled(keys) {
      append('-', keys);
      for (const k of keys) {
        own.delete(k);
        for (const j of earlier) j.pending.delete(k);
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      if (own.size === 0) rmSync(ownPath, { force: true });
      let pendingFromEarlierRuns = 0;
      for (const j of earlier) {
        if (j.pending.size === 0) {
          rmSync(j.path, { force: true });
          continue;
        }
        pendingFromEarlierRuns += j.pending.size;
        const next = `${j.path}.next`;
        writeFileSync(next, [...j.pending].map((k) => `+${k}\n`).join(''), { mode: 0o600 });
        renameSync(next, j.path);
      }
      return { pendingFromEarlierRuns };
    },
  };
}
