/** A Floe server listening on loopback for the console's browser tests, with SQL as its admin. */
import type { Test } from 'tap';
import { openStore } from '../../catalog/store/open-store.js';
import { listenOnLoopback, type LoopbackClient } from './http.js';
import { startTestServer, type TestServer, type TestServerOptions } from './server.js';

export interface ConsoleServer {
  readonly server: TestServer;
  readonly http: LoopbackClient;
  /** Runs SQL as the bootstrap administrator (a service account); throws on an error answer. */
  adminSql(sql: string): Promise<{ columns: string[]; rows: unknown[][] }>;
}

export async function startConsoleServer(t: Test, options: TestServerOptions = {}): Promise<ConsoleServer> {
  const store = await openStore({ kind: 'pglite-memory' });
  const server = await startTestServer(store, options);
  t.teardown(() => server.close());
  const http = await listenOnLoopback(server);
  const adminToken = await server.token();
  return {
    server, http,
    async adminSql(sql) {
      const r = await http.query(adminToken, { sql });
      if (r.status !== 200) throw new Error(`${sql}: ${r.status} ${r.text}`);
      return r.json as { columns: string[]; rows: unknown[][] };
    },
  };
}
