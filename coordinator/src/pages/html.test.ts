import { describe, expect, test } from 'vitest';
import { html } from './html.js';

describe('html', () => {
  test('default', () => {
    expect(html`<p>${'<script>"x" & \'y\'</script>'}</p>`.value).toBe(
      '<p>&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;</p>',
    );
  });

  test('behavior: nested templates and arrays are not escaped twice; null renders nothing', () => {
    const items = ['a<b', 'c'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${3}`.value).toBe('<ul><li>a&lt;b</li><li>c</li></ul>3');
  });
});
