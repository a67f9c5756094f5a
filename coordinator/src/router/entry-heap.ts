/**
 * An indexed binary min-heap over entries, ordered by compareEntries: each entry remembers its
 * position (`pos`, -1 when out), so one can be moved or taken out in O(log n) when it changes.
 */
import { compareEntries, type Entry } from './index-entry.js';

export function heapPush(heap: Entry[], entry: Entry): void {
  entry.pos = heap.length;
  heap.push(entry);
  siftUp(heap, entry.pos);
}

export function heapRemove(heap: Entry[], entry: Entry): void {
  const i = entry.pos;
  const last = heap.pop()!;
  entry.pos = -1;
  if (last !== entry) {
    heap[i] = last;
    last.pos = i;
    heapFix(heap, i);
  }
}

export function heapFix(heap: Entry[], i: number): void {
  if (!siftUp(heap, i)) siftDown(heap, i);
}

function siftUp(heap: Entry[], start: number): boolean {
  let i = start;
  const item = heap[i]!;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const p = heap[parent]!;
    if (compareEntries(item, p) >= 0) break;
    heap[i] = p;
    p.pos = i;
    i = parent;
  }
  heap[i] = item;
  item.pos = i;
  return i !== start;
}

function siftDown(heap: Entry[], start: number): void {
  let i = start;
  const item = heap[i]!;
  const n = heap.length;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && compareEntries(heap[r]!, heap[l]!) < 0 ? r : l;
    const child = heap[c]!;
    if (compareEntries(child, item) >= 0) break;
    heap[i] = child;
    child.pos = i;
    i = c;
  }
  heap[i] = item;
  item.pos = i;
}
