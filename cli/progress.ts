import { Presets, SingleBar } from 'cli-progress';

/** Progress of a long step with a known total (bytes read, rows sent). */
export interface Progress {
  update(done: number): void;
  /** Ends the bar (a terminal) or prints nothing more; safe to call twice. */
  stop(): void;
}

/** How often a plain progress line is printed when stderr is not a terminal. */
const PLAIN_EVERY_MS = 10_000;

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

/**
 * Progress on stderr with an ETA: a bar on a terminal; when stderr is piped, a plain line every 10
 * seconds (nothing for steps shorter than that), so logs stay readable and stdout stays the result.
 * `unit` names what is counted; `scale` turns the count into what is shown (bytes into MB, say).
 */
export function startProgress(label: string, total: number, unit: string, scale: (n: number) => number = (n) => n): Progress {
  if (process.stderr.isTTY) {
    const bar = new SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {shown}/{shownTotal} ${unit} | ETA {eta_formatted}`,
        stream: process.stderr,
        etaBuffer: 50,
        hideCursor: true,
      },
      Presets.shades_classic,
    );
    bar.start(total, 0, { shown: scale(0), shownTotal: scale(total) });
    let stopped = false;
    return {
      update: (done) => bar.update(done, { shown: scale(done) }),
      stop() {
        if (stopped) return;
        stopped = true;
        bar.stop();
      },
    };
  }
  const started = Date.now();
  let lastLine = started;
  return {
    update(done) {
      const now = Date.now();
      if (now - lastLine < PLAIN_EVERY_MS || done <= 0) return;
      lastLine = now;
      const rate = done / ((now - started) / 1000);
      const percent = total > 0 ? Math.floor((100 * done) / total) : 100;
      process.stderr.write(`${label}: ${scale(done)}/${scale(total)} ${unit} (${percent}%), about ${formatDuration((total - done) / rate)} left\n`);
    },
    stop() {},
  };
}
