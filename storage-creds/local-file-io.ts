/**
 * FileIO over the local file system, for `file:` URIs and absolute paths. Other schemes (`s3://`,
 * `gs://`, `abfss://`, …) fail with `UnsupportedLocationError`.
 *
 * Locations are taken literally, without percent-decoding: Iceberg writers store paths such as
 * `partition_col=2023-05-15T14%3A30%3A45%2B00%3A00` and create directories with exactly that name.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { FileAlreadyExistsError, FileNotFoundError, UnsupportedLocationError, schemeOf } from './file-io.js';
import type { FileIO, FileInfo, WriteOptions } from './file-io.js';

/**
 * The local path of a `file:` URI (`file:///a/b`, `file:/a/b`, `file://localhost/a/b`) or an absolute
 * path. Throws `UnsupportedLocationError` for other schemes and for relative paths (which need a
 * location mapping first). The engine passes the result to DuckDB's `read_parquet`.
 */
export function resolveLocalPath(location: string): string {
  const scheme = schemeOf(location);
  let p: string;
  if (scheme === undefined) {
    p = location;
  } else if (scheme === 'file') {
    p = location.slice('file:'.length);
    if (p.startsWith('//')) {
      const rest = p.slice(2);
      const slash = rest.indexOf('/');
      const host = slash === -1 ? rest : rest.slice(0, slash);
      if (host !== '' && host !== 'localhost') throw new UnsupportedLocationError(location, 'file (remote host)');
      p = slash === -1 ? '/' : rest.slice(slash);
    }
  } else {
    throw new UnsupportedLocationError(location, scheme);
  }
  if (!path.isAbsolute(p)) throw new UnsupportedLocationError(location, 'relative path');
  return path.normalize(p);
}

/** Whether `location` is one this FileIO serves. */
export function isLocalLocation(location: string): boolean {
  try {
    resolveLocalPath(location);
    return true;
  } catch {
    return false;
  }
}

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
}

export class LocalFileIO implements FileIO {
  async read(location: string): Promise<Buffer> {
    try {
      return await fs.readFile(resolveLocalPath(location));
    } catch (e) {
      if (isErrno(e, 'ENOENT') || isErrno(e, 'EISDIR')) throw new FileNotFoundError(location);
      throw e;
    }
  }

  async readRange(location: string, offset: number, length: number): Promise<Buffer> {
    let handle;
    try {
      handle = await fs.open(resolveLocalPath(location), 'r');
    } catch (e) {
      if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) throw new FileNotFoundError(location);
      throw e;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new FileNotFoundError(location);
      const n = Math.max(0, Math.min(length, st.size - offset));
      const buf = Buffer.alloc(n);
      let done = 0;
      while (done < n) {
        const { bytesRead } = await handle.read(buf, done, n - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return buf.subarray(0, done);
    } finally {
      await handle.close();
    }
  }

  /**
   * Writes to a temporary file beside the target, fsyncs it, then publishes it: `link` for
   * create-if-absent (fails atomically with EEXIST when the target exists), `rename` for overwrite.
   */
  async write(location: string, bytes: Uint8Array, options: WriteOptions = {}): Promise<void> {
    const target = resolveLocalPath(location);
    const dir = path.dirname(target);
    await fs.mkdir(dir, { recursive: true });
    const temp = path.join(dir, `.${path.basename(target)}.${randomUUID()}.tmp`);
    const handle = await fs.open(temp, 'wx');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      if (options.overwrite === true) {
        await fs.rename(temp, target);
        return;
      }
      try {
        await fs.link(temp, target);
      } catch (e) {
        if (isErrno(e, 'EEXIST')) throw new FileAlreadyExistsError(location);
        throw e;
      }
    } finally {
      await fs.rm(temp, { force: true });
    }
  }

  async exists(location: string): Promise<boolean> {
    try {
      return (await fs.stat(resolveLocalPath(location))).isFile();
    } catch (e) {
      if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) return false;
      throw e;
    }
  }

  async size(location: string): Promise<number> {
    try {
      const st = await fs.stat(resolveLocalPath(location));
      if (!st.isFile()) throw new FileNotFoundError(location);
      return st.size;
    } catch (e) {
      if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) throw new FileNotFoundError(location);
      throw e;
    }
  }

  async delete(location: string): Promise<void> {
    await fs.rm(resolveLocalPath(location), { force: true });
  }

  async deletePrefix(prefix: string): Promise<number> {
    const files = await this.list(prefix);
    for (const f of files) await this.delete(f.location);
    // Remove the directory itself when the prefix names one (purge leaves no empty table folder).
    const root = resolveLocalPath(prefix);
    if (prefix.endsWith('/')) await fs.rm(root, { recursive: true, force: true });
    return files.length;
  }

  /**
   * Files whose location starts with `prefix`. A prefix ending in `/` lists that directory recursively;
   * otherwise the parent directory is scanned and filtered by name prefix. Returned locations keep the
   * caller's form (`file:` URI or plain path).
   */
  async list(prefix: string): Promise<readonly FileInfo[]> {
    const root = resolveLocalPath(prefix);
    const isUri = schemeOf(prefix) === 'file';
    const base = prefix.endsWith('/') ? root : path.dirname(root);
    const out: FileInfo[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch (e) {
        if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) return;
        throw e;
      }
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if ((full + '/').startsWith(root) || root.startsWith(full)) await walk(full);
        } else if (entry.isFile() && full.startsWith(root)) {
          const st = await fs.stat(full);
          out.push({ location: isUri ? `file://${full}` : full, size: st.size, lastModifiedMs: st.mtimeMs });
        }
      }
    };
    await walk(base);
    return out.sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0));
  }
}
