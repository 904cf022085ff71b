/**
 * A loopback TCP proxy that a test can cut and restore, to make a real server unreachable. By
 * default it relays bytes unchanged; a `relay` reads and forwards them itself, to break a
 * connection at a chosen point of a protocol (tests/helpers/pg-fault-proxy.ts).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Drops every open connection and refuses new ones until `restore`. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/**
 * Carries one proxied connection: `client` is the accepted socket, `upstream` the one to the
 * target, `cut` destroys both (the proxy also cuts both when either closes or fails).
 */
export type ConnectionRelay = (client: Socket, upstream: Socket, cut: () => void) => void;

const relayUnchanged: ConnectionRelay = (client, upstream) => {
  client.pipe(upstream).pipe(client);
};

export async function startTcpProxy(
  targetHost: string,
  targetPort: number,
  relay: ConnectionRelay = relayUnchanged,
): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let isCut = false;
  const server: Server = createServer((client) => {
    if (isCut) return void client.destroy();
    const upstream = connect(targetPort, targetHost);
    open.add(client).add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    relay(client, upstream, drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  const proxy: TcpProxy = {
    port: address.port,
    cut() {
      isCut = true;
      for (const s of open) s.destroy();
      open.clear();
    },
    restore() {
      isCut = false;
    },
    close() {
      proxy.cut();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
