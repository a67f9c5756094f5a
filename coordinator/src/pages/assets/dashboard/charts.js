// The dashboard's SVG charts: columns per day, bars per model.

import { formatCount } from './format.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Clears a chart but keeps its <title> (its accessible name). */
function resetChart(chart) {
  for (const child of [...chart.children]) if (child.tagName !== 'title') child.remove();
}

/** Vertical columns, one per day, labelled below, tallest value on top. */
export function drawColumns(chart, points, format) {
  resetChart(chart);
  const width = chart.viewBox.baseVal?.width || 520;
  const height = 220;
  const top = 22;
  const bottom = 28;
  const max = Math.max(...points.map((p) => p.value), 0);
  const slot = width / points.length;
  const barWidth = Math.max(4, slot * 0.62);
  chart.appendChild(
    svg('line', { class: 'axis', x1: 0, x2: width, y1: height - bottom, y2: height - bottom }),
  );
  points.forEach((point, i) => {
    const h = max > 0 ? ((height - top - bottom) * point.value) / max : 0;
    const x = i * slot + (slot - barWidth) / 2;
    const bar = svg('rect', {
      class: 'bar',
      x: x.toFixed(1),
      y: (height - bottom - h).toFixed(1),
      width: barWidth.toFixed(1),
      height: Math.max(h, point.value > 0 ? 1 : 0).toFixed(1),
      rx: 2,
    });
    bar.appendChild(svg('title', {}, `${point.title}: ${format(point.value)}`));
    chart.appendChild(bar);
    const every = Math.ceil(points.length / 8);
    if ((points.length - 1 - i) % every === 0) {
      // Labels at the edges anchor inward so they are never cut off.
      const center = x + barWidth / 2;
      const anchor = center < 24 ? 'start' : center > width - 24 ? 'end' : 'middle';
      const labelX = anchor === 'start' ? 0 : anchor === 'end' ? width : center;
      chart.appendChild(
        svg('text', { x: labelX.toFixed(1), y: height - 10, 'text-anchor': anchor }, point.label),
      );
    }
  });
  const label = max > 0 ? `max ${format(max)}` : 'no spend in this period';
  chart.appendChild(svg('text', { x: 0, y: 12, class: 'value' }, label));
}

/** Horizontal bars, one per model (top 6), value at the end of each bar. */
export function drawBars(chart, points) {
  resetChart(chart);
  const width = 520;
  const shown = points.slice(0, 6);
  if (shown.length === 0) {
    chart.appendChild(svg('text', { x: 260, y: 110, 'text-anchor': 'middle' }, 'No tokens used yet'));
    return;
  }
  const labelWidth = 170;
  const valueWidth = 80;
  const row = 220 / 6;
  const max = Math.max(...shown.map((p) => p.value), 1);
  shown.forEach((point, i) => {
    const y = i * row + 6;
    const w = ((width - labelWidth - valueWidth) * point.value) / max;
    const name = point.label.length > 24 ? `${point.label.slice(0, 23)}…` : point.label;
    chart.appendChild(svg('text', { x: 0, y: y + row / 2, 'dominant-baseline': 'middle' }, name));
    const bar = svg('rect', {
      class: 'bar-alt',
      x: labelWidth,
      y: y + 4,
      width: Math.max(w, 1).toFixed(1),
      height: (row - 14).toFixed(1),
      rx: 3,
    });
    bar.appendChild(svg('title', {}, `${point.label}: ${formatCount(point.value)} tokens`));
    chart.appendChild(bar);
    chart.appendChild(
      svg(
        'text',
        {
          x: (labelWidth + w + 6).toFixed(1),
          y: y + row / 2,
          'dominant-baseline': 'middle',
          class: 'value',
        },
        formatCount(point.value),
      ),
    );
  });
}
