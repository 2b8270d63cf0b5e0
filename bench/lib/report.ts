import type { PartResult, Verdict } from './part';

const MARK: Record<Verdict, string> = { met: 'met', missed: 'MISSED', info: '' };

/** Escapes a cell for a Markdown table. */
function cell(text: string | undefined): string {
  return (text ?? '').replaceAll('|', '\\|');
}

/**
 * The bench table as Markdown: readable on a terminal and pasted as is into docs/performance.md.
 */
export function renderTable(results: readonly PartResult[]): string {
  const lines = ['| part | figure | value | floor / bound | ratio | target | verdict |', '|---|---|---|---|---|---|---|'];
  for (const result of results) {
    for (const row of result.rows) {
      lines.push(
        `| ${cell(result.part)} | ${cell(row.metric)} | ${cell(row.value)} | ${cell(row.reference)} | ${cell(row.ratio)} | ${cell(row.target)} | ${MARK[row.verdict]} |`,
      );
    }
  }
  return lines.join('\n');
}

/** Notes of each part, as Markdown bullet lists under the part titles. */
export function renderNotes(results: readonly PartResult[]): string {
  return results
    .map((r) => [`**${r.title}**${r.seconds === undefined ? '' : ` (${r.seconds.toFixed(0)} s)`}`, ...r.notes.map((n) => `- ${n}`)].join('\n'))
    .join('\n\n');
}
