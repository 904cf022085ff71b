/** An item of an `IndexedHeap`: the heap keeps its position up to date, so removal is O(log n). */
export interface HeapSlot {
  heapIndex: number;
}

/**
 * A binary min-heap whose items know their position: push, pop and removal of any item in
 * O(log n), peek in O(1). The resource groups' queues, the deadlines and the MLFQ's per-level
 * waiting lists (a queued query or quantum leaves from anywhere when it is cancelled or times
 * out). An item belongs to at most one heap at a time; `heapIndex` is -1 when it is in none.
 */
export class IndexedHeap<T extends HeapSlot> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.up(item.heapIndex);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top !== undefined) this.removeAt(0);
    return top;
  }

  /** Removes `item` if this heap holds it; returns whether it did. */
  remove(item: T): boolean {
    const i = item.heapIndex;
    if (i < 0 || i >= this.items.length || this.items[i] !== item) return false;
    this.removeAt(i);
    return true;
  }

  /** The items in heap order (not sorted); for reading, not for changing. */
  values(): readonly T[] {
    return this.items;
  }

  /** The items in dequeue order (a copy; O(n log n)). */
  sorted(): T[] {
    return [...this.items].sort((a, b) => (this.less(a, b) ? -1 : this.less(b, a) ? 1 : 0));
  }

  private removeAt(i: number): void {
    const a = this.items;
    const gone = a[i]!;
    const last = a.pop()!;
    gone.heapIndex = -1;
    if (i < a.length) {
      a[i] = last;
      last.heapIndex = i;
      this.up(i);
      this.down(last.heapIndex);
    }
  }

  private up(i: number): void {
    const a = this.items;
    const item = a[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = a[parent]!;
      if (!this.less(item, p)) break;
      a[i] = p;
      p.heapIndex = i;
      i = parent;
    }
    a[i] = item;
    item.heapIndex = i;
  }

  private down(i: number): void {
    const a = this.items;
    const item = a[i]!;
    const n = a.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.less(a[r]!, a[l]!) ? r : l;
      if (!this.less(a[c]!, item)) break;
      a[i] = a[c]!;
      a[i]!.heapIndex = i;
      i = c;
    }
    a[i] = item;
    item.heapIndex = i;
  }
}
