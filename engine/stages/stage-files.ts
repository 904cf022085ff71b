/**
 * The files of one stage, over the catalog's FileIO: the local disk on `file://` warehouses, an
 * object store otherwise (the same interface, storage-creds/file-io.ts). Every key passes
 * `checkStageKey` before it becomes a location, so nothing here can reach outside `root`.
 */
import type { FileIO } from '../../storage-creds/file-io.js';
import { checkStageKey } from './stage-path.js';

/** A file in a stage. */
export interface StagedFile {
  /** Path relative to the stage's folder. */
  readonly key: string;
  readonly location: string;
  readonly size: number;
  readonly lastModifiedMs: number;
  /**
   * What identifies this version of the file for the load history: the size and modification time
   * on local disk (an object store's ETag where the FileIO reports one).
   */
  readonly etag: string;
}

export class StageFiles {
  /** `root` is the stage folder's location, ending in '/'. */
  constructor(readonly io: FileIO, readonly root: string) {
    if (!root.endsWith('/')) throw new Error(`stage root must end with '/': ${root}`);
  }

  /** The location of a checked key. */
  location(key: string): string {
    return this.root + checkStageKey(key);
  }

  /** Files whose key starts with `prefix` ('' for all), sorted by key. */
  async list(prefix: string): Promise<StagedFile[]> {
    checkStageKey(prefix, { allowEmpty: true, allowFolder: true });
    const found = await this.io.list(this.root + prefix);
    const out: StagedFile[] = [];
    for (const f of found) {
      if (!f.location.startsWith(this.root)) continue;
      const key = f.location.slice(this.root.length);
      // A name written by another tool that Floe would refuse is not offered (it could not be addressed).
      if (checkKeyQuietly(key)) out.push({ key, location: f.location, size: f.size, lastModifiedMs: f.lastModifiedMs, etag: `${f.size}-${Math.trunc(f.lastModifiedMs)}` });
    }
    return out;
  }

  async remove(key: string): Promise<void> {
    await this.io.delete(this.location(key));
  }

  async write(key: string, bytes: Uint8Array): Promise<void> {
    await this.io.write(this.location(key), bytes, { overwrite: true });
  }

  async read(key: string): Promise<Buffer> {
    return this.io.read(this.location(key));
  }
}

function checkKeyQuietly(key: string): boolean {
  try {
    checkStageKey(key);
    return true;
  } catch {
    return false;
  }
}
