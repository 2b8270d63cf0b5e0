import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CliError, describeError, jsonText, printable, printableLines, printErrorLine, printLine, printListing, printRecord, printTable, printText } from '@cli/output';

/** Characters that must never reach a terminal raw (the set printable escapes). */
const RAW_UNSAFE = /[\p{Cc}\p{Cs}\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/u;

/** Any code point (lone surrogates included), often one of the first 0x3100 where the controls, bidi and format characters are. */
const anyText = fc.string({
  unit: fc.oneof(fc.integer({ min: 0, max: 0x30ff }), fc.integer({ min: 0, max: 0x10ffff })).map((cp) => String.fromCodePoint(cp)),
});

const HIJACK = 'ok\u001b[2J\u001b[H\u001b]0;TITLE-HIJACK\u0007\u001b[32mapproved and confirmed by pull\u001b[0m';

describe('printable', () => {
  it('shows ESC sequences and BEL as visible escapes (the KYC note of the finding)', () => {
    expect(printable(HIJACK)).toBe(
      'ok\\u001b[2J\\u001b[H\\u001b]0;TITLE-HIJACK\\u0007\\u001b[32mapproved and confirmed by pull\\u001b[0m',
    );
  });

  it('shows a CR that would overwrite the line, and a newline that would forge a row or a payrelay: line', () => {
    expect(printable('Kwame Mensah\rAma Owusu')).toBe('Kwame Mensah\\rAma Owusu');
    expect(printable('x\npayrelay: all payouts SUCCEEDED')).toBe('x\\npayrelay: all payouts SUCCEEDED');
    expect(printable('a\tb\u000b\u000cc\u0000')).toBe('a\\tb\\u000b\\u000cc\\u0000');
  });

  it('shows DEL and the C1 controls, the one-byte CSI U+009B among them', () => {
    expect(printable('\u009b2J\u009d0;title\u009c')).toBe('\\u009b2J\\u009d0;title\\u009c');
    expect(printable('a\u007fb\u0080\u0085\u009f')).toBe('a\\u007fb\\u0080\\u0085\\u009f');
  });

  it('shows bidi overrides, isolates, marks and other invisible format characters', () => {
    // "Ama" then a right-to-left override making "exe.gpj" read as "jpg.exe".
    expect(printable('Ama \u202Eexe.gpj')).toBe('Ama \\u202eexe.gpj');
    expect(printable('\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c')).toBe(
      '\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c',
    );
    expect(printable('Pay\u200bPal\u00ad\u2060\ufeff\u2028\u2029')).toBe('Pay\\u200bPal\\u00ad\\u2060\\ufeff\\u2028\\u2029');
    // Tag characters (invisible ASCII look-alikes) and a lone surrogate.
    expect(printable('a\u{e0041}\u{e007f}b\ud800')).toBe('a\\u{e0041}\\u{e007f}b\\ud800');
  });

  it('leaves names of every script, accents, emoji and joiners as they are', () => {
    for (const text of [
      'Adaeze Okafor',
      'Zoë',
      '李雷',
      'Kwame Mensah & Sons, Ltd. (GHS 1,234.50) 100% "ok" \'quoted\' C:\\path',
      'Ñandú Ørsted Åsa Łukasz Çelik',
      'محمد علي',
      'שלום',
      'Ελένη Παπαδοπούλου',
      'Иван Петров',
      'राम कुमार',
      'می‌خواهم',
      '👍🏽 🇬🇭 👩‍💻 ❤️ 🎉',
    ]) {
      expect(printable(text)).toBe(text);
    }
  });

  it('leaves nothing raw for a terminal to act on, and applying it twice changes nothing more', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const once = printable(text);
        expect(once).not.toMatch(RAW_UNSAFE);
        expect(printable(once)).toBe(once);
      }),
    );
  });
});

describe('printableLines', () => {
  it('keeps the line breaks of a body and escapes everything else', () => {
    expect(printableLines('{\n  "note": "\u001b[2J"\r\n}')).toBe('{\n  "note": "\\u001b[2J"\\r\n}');
  });
});

describe('jsonText', () => {
  it('is JSON.stringify, which already escapes C0 controls such as ESC and BEL', () => {
    expect(JSON.stringify({ note: HIJACK })).toContain('\\u001b[2J');
    expect(JSON.stringify({ note: HIJACK })).not.toMatch(/\p{Cc}/u);
    expect(jsonText({ a: 'x', n: 1 }, 2)).toBe(JSON.stringify({ a: 'x', n: 1 }, null, 2));
  });

  it('also escapes what JSON.stringify leaves raw (DEL, C1, bidi and format characters) and parses to the same value', () => {
    const value = { name: 'Zoë 李雷 👩‍💻', csi: '\u009b2J', del: '\u007f', bidi: '\u202eexe.gpj\u2066', tag: '\u{e0041}', sep: '\u2028' };
    expect(JSON.stringify(value)).toMatch(/[\u009b\u202e]/);
    const text = jsonText(value, 2);
    expect(text).toContain('\\u009b2J');
    expect(text).toContain('\\u202eexe.gpj\\u2066');
    expect(text).toContain('\\udb40\\udc41');
    expect(text).toContain('Zoë 李雷 👩‍💻');
    expect(text.replace(/\n/g, '')).not.toMatch(RAW_UNSAFE);
    expect(JSON.parse(text)).toEqual(value);
  });

  it('parses to the value it was given, whatever the strings hold', () => {
    fc.assert(
      fc.property(fc.dictionary(anyText, anyText), (value) => {
        expect(JSON.parse(jsonText(value))).toEqual(JSON.parse(JSON.stringify(value)));
        expect(jsonText(value)).not.toMatch(RAW_UNSAFE);
      }),
    );
  });
});

describe('what the CLI prints', () => {
  const printed = (): string => {
    const calls = [...vi.mocked(console.log).mock.calls, ...vi.mocked(console.error).mock.calls];
    return calls.map((c) => c.join(' ')).join('\n');
  };
  const capture = (): void => {
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  };
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('prints table cells, record fields and keys, lines and bodies with no raw control character', () => {
    capture();
    printRecord({ verified_name: `Kwame\n│ state │ SUCCEEDED │\r${HIJACK}`, [`key\u001b[31m`]: 'v', nested: { note: '\u009b2J' } });
    printTable(['a\u0007'], [['\u202eexe.gpj'], [null]]);
    printListing(['x'], [], 'nothing \u001b[2J');
    printLine('line \u001b]0;t\u0007');
    printErrorLine('error \u001b[2J');
    printText('body\n\u001b[2J');
    const out = printed();
    expect(out).not.toContain('\u001b');
    expect(['\u0007', '\u009b', '\u202e', '\r'].filter((ch) => out.includes(ch))).toEqual([]);
    expect(out).toContain('\\u001b]0;TITLE-HIJACK\\u0007');
    expect(out).toContain('Kwame\\n│ state │ SUCCEEDED │\\r');
    expect(out).toContain('key\\u001b[31m');
    expect(out).toContain('\\u009b2J');
    expect(out).toContain('\\u202eexe.gpj');
    expect(out).toContain('nothing \\u001b[2J');
    expect(out).toContain('body\n\\u001b[2J');
  });

  it('describes an error quoting a provider on one safe line', () => {
    const rejected = Object.assign(new Error(`account name \u001b[32mOK\u001b[0m\rfake`), { name: 'ProviderRejectedError' });
    expect(describeError(rejected)).toBe('the provider refused: account name \\u001b[32mOK\\u001b[0m\\rfake');
    expect(describeError(new Error('first\u2028second\nthird'))).toBe('first\\u2028second');
    expect(describeError(new CliError('no payout \u009b2J'))).toBe('no payout \\u009b2J');
    expect(describeError('\u001b[2J')).toBe('\\u001b[2J');
  });
});
