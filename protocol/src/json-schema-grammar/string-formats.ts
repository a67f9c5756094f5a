/**
 * The `format`s OpenAI's structured outputs accept, as the strings they allow — each a subset that
 * every common validator accepts (ajv-formats' full mode, zod's checks, RFC 3339/5321/4291/1123):
 * dates with each month's days (29 February in leap years only), times in UTC (`Z`) with up to
 * milliseconds, addresses and host names of bounded length, version-1…8 UUIDs in lower case, IPv6
 * in its full eight-group form.
 */
import { alt, cls, type Expr, lit, opt, rep, seq } from './expr.js';

const range = (from: string, to: string): Expr => cls([[from.codePointAt(0)!, to.codePointAt(0)!]]);
const DIGIT = range('0', '9');
const HEX = cls([
  [0x30, 0x39],
  [0x61, 0x66],
]);
const digits = (n: number): Expr => rep(DIGIT, n, n);
const oneOf = (...texts: string[]): Expr => alt(...texts.map(lit));

const EVEN = oneOf('0', '2', '4', '6', '8');
const ODD = oneOf('1', '3', '5', '7', '9');
/** Two digits divisible by 4 (00 included). */
const BY_FOUR = alt(seq(EVEN, oneOf('0', '4', '8')), seq(ODD, oneOf('2', '6')));
/** Years divisible by 4 but not by 100, or by 400 (the Gregorian leap years), as four digits. */
const LEAP_YEAR = alt(
  seq(
    digits(2),
    alt(seq(EVEN, oneOf('4', '8')), seq(oneOf('2', '4', '6', '8'), lit('0')), seq(ODD, oneOf('2', '6'))),
  ),
  seq(BY_FOUR, lit('00')),
);

const DAY_28 = alt(seq(lit('0'), range('1', '9')), seq(lit('1'), DIGIT), seq(lit('2'), range('0', '8')));
const DAY_30 = alt(seq(lit('0'), range('1', '9')), seq(range('1', '2'), DIGIT), lit('30'));
const DAY_31 = alt(DAY_30, lit('31'));

const DATE = alt(
  seq(
    digits(4),
    lit('-'),
    alt(
      seq(oneOf('01', '03', '05', '07', '08', '10', '12'), lit('-'), DAY_31),
      seq(oneOf('04', '06', '09', '11'), lit('-'), DAY_30),
      seq(lit('02-'), DAY_28),
    ),
  ),
  seq(LEAP_YEAR, lit('-02-29')),
);

const HOUR = alt(seq(range('0', '1'), DIGIT), seq(lit('2'), range('0', '3')));
const SIXTY = seq(range('0', '5'), DIGIT);
const TIME = seq(HOUR, lit(':'), SIXTY, lit(':'), SIXTY, opt(seq(lit('.'), rep(DIGIT, 1, 3))), lit('Z'));

const LOWER_ALNUM = cls([
  [0x30, 0x39],
  [0x61, 0x7a],
]);
/** A DNS label: letters and digits, inner hyphens, at most 32 characters. */
const LABEL = seq(LOWER_ALNUM, opt(seq(rep(alt(LOWER_ALNUM, lit('-')), 0, 30), LOWER_ALNUM)));

const LOCAL_ATOM = rep(
  cls([
    [0x2b, 0x2b],
    [0x2d, 0x2d],
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ]),
  1,
  15,
);
const EMAIL = seq(
  LOCAL_ATOM,
  rep(seq(lit('.'), LOCAL_ATOM), 0, 3),
  lit('@'),
  rep(seq(LABEL, lit('.')), 1, 3),
  rep(range('a', 'z'), 2, 10),
);

const OCTET = alt(
  seq(lit('25'), range('0', '5')),
  seq(lit('2'), range('0', '4'), DIGIT),
  seq(lit('1'), DIGIT, DIGIT),
  seq(range('1', '9'), DIGIT),
  DIGIT,
);

const GROUP = rep(HEX, 1, 4);

const FORMATS: Readonly<Record<string, Expr>> = {
  date: DATE,
  time: TIME,
  'date-time': seq(DATE, lit('T'), TIME),
  email: EMAIL,
  uuid: seq(
    rep(HEX, 8, 8),
    lit('-'),
    rep(HEX, 4, 4),
    lit('-'),
    range('1', '8'),
    rep(HEX, 3, 3),
    lit('-'),
    oneOf('8', '9', 'a', 'b'),
    rep(HEX, 3, 3),
    lit('-'),
    rep(HEX, 12, 12),
  ),
  ipv4: seq(OCTET, rep(seq(lit('.'), OCTET), 3, 3)),
  ipv6: seq(GROUP, rep(seq(lit(':'), GROUP), 7, 7)),
  hostname: seq(LABEL, rep(seq(lit('.'), LABEL), 0, 3)),
};

/** The formats enforced, as JSON Schema names them. */
export const STRING_FORMATS: readonly string[] = Object.keys(FORMATS);

/** The strings of `format`, or undefined for a format not enforced. */
export function formatExpr(format: string): Expr | undefined {
  return Object.hasOwn(FORMATS, format) ? FORMATS[format] : undefined;
}
