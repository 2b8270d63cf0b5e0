/**
 * Table colours only on a terminal, so piped output stays plain text. `npm start` and the CLI print
 * tables alike; it lives here because the local runner never imports the CLI (the CLI depends on
 * the local stack's state file, not the other way round).
 */
export function tableStyle(): { head: string[]; border: string[] } {
  return process.stdout.isTTY ? { head: ['cyan'], border: ['grey'] } : { head: [], border: [] };
}
