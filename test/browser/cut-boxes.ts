import type { Page } from 'playwright-core';

/**
 * The visible tables and code boxes of `page` that cut their content: wider than their box with
 * no scrollbar to reach the rest, or reaching past their parent or the viewport. Each is named by
 * its id, else the id of the table or code inside it.
 */
export function cutBoxes(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll<HTMLElement>('.table-scroll, pre'))
      .filter((box) => {
        if (box.offsetParent === null) return false;
        const { overflowX } = getComputedStyle(box);
        const scrolls = overflowX === 'auto' || overflowX === 'scroll';
        const right = box.getBoundingClientRect().right;
        const parentRight = box.parentElement?.getBoundingClientRect().right ?? right;
        return (
          (box.scrollWidth > box.clientWidth && !scrolls) ||
          right > parentRight + 1 ||
          right > document.documentElement.clientWidth
        );
      })
      .map((box) => box.id || box.querySelector('[id]')?.id || box.className),
  );
}
