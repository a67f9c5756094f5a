import { expect, test } from 'vitest';
import { toCsvLine } from './to-csv-line.js';

test('default: plain fields, numbers and nulls, CRLF', () => {
  expect(toCsvLine(['a', 1, 0.000012, null, 'b c'])).toBe('a,1,0.000012,,b c\r\n');
});

test('behavior: commas, quotes and line breaks are quoted, quotes doubled (RFC 4180)', () => {
  expect(toCsvLine(['my, key', 'say "hi"', 'two\nlines', 'cr\r'])).toBe(
    '"my, key","say ""hi""","two\nlines","cr\r"\r\n',
  );
  expect(toCsvLine(['"'])).toBe('""""\r\n');
});

test('behavior: text a spreadsheet would run as a formula is defused; numbers are not', () => {
  expect(toCsvLine(['=1+1', '+x', '-y', '@SUM(A1)', '=HYPERLINK("u","x")', -1])).toBe(
    `'=1+1,'+x,'-y,'@SUM(A1),"'=HYPERLINK(""u"",""x"")",-1\r\n`,
  );
});
