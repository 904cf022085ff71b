/**
 * Query ids are UUIDs version 7 (RFC 9562 §5.7): 48 bits of Unix milliseconds, then a 12-bit
 * counter that orders ids made in the same millisecond (§6.2, method 1), then 62 random bits.
 * History lists queries newest first by `queued_at` then id: with random ids, two statements
 * queued in the same millisecond came back in either order; these keep submission order within
 * a process, and stay unguessable.
 */
import { randomFillSync } from 'node:crypto';

/** Random bytes are drawn this many ids at a time: one call to the generator per 256 ids, not per id. */
const IDS_PER_DRAW = 256;

export class QueryIds {
  #lastMs = -1;
  #counter = 0;
  readonly #random = Buffer.alloc(16 * IDS_PER_DRAW);
  #randomAt = this.#random.length;

  constructor(private readonly now: () => number = Date.now) {}

  next(): string {
    let ms = Math.max(this.now(), this.#lastMs);
    if (ms === this.#lastMs) {
      this.#counter++;
      // The counter ran out within one millisecond: borrow the next one (ids stay ordered).
      if (this.#counter > 0xfff) {
        ms++;
        this.#counter = 0;
      }
    } else {
      this.#counter = 0;
    }
    this.#lastMs = ms;
    if (this.#randomAt === this.#random.length) {
      randomFillSync(this.#random);
      this.#randomAt = 0;
    }
    const b = Buffer.from(this.#random.subarray(this.#randomAt, this.#randomAt + 16));
    this.#randomAt += 16;
    b.writeUIntBE(ms, 0, 6);
    b[6] = 0x70 | (this.#counter >> 8);
    b[7] = this.#counter & 0xff;
    b[8] = 0x80 | (b[8]! & 0x3f);
    const hex = b.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
