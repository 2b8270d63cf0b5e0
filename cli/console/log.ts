import { jsonLinesLog } from '../log';

/**
 * The console's own log: one JSON line per entry on stderr (the terminal that started it), every
 * level, so each action and each refused request leaves a line with its correlation keys.
 */
export const consoleLog = jsonLinesLog({ service: 'payrelay-console' });
