/** Markup that is already safe to place in a page (built by {@link html} or a trusted constant). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

type Interpolation = SafeHtml | string | number | bigint | null | undefined | readonly Interpolation[];

/**
 * Tagged template for server-rendered pages: every interpolated value is HTML-escaped unless it is
 * a {@link SafeHtml} (the result of another `html` template); arrays are joined; null renders nothing.
 */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

function render(value: Interpolation): string {
  if (value === null || value === undefined) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}
