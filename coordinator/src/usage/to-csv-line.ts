/** Characters that make a spreadsheet read a cell as a formula (CSV injection, OWASP). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV record (RFC 4180): fields joined by commas, ended by CRLF; a field holding a comma, a
 * double quote, CR or LF is quoted, its quotes doubled. null is an empty field. A text field that
 * a spreadsheet would run as a formula (`=…`, `+…`, `-…`, `@…`) gets a leading `'`: model names come
 * from third-party nodes and key names from users, and an export must not run either. Numbers are
 * written as they are.
 */
export function toCsvLine(fields: readonly (string | number | null)[]): string {
  return `${fields.map(toCsvField).join(',')}\r\n`;
}

function toCsvField(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
