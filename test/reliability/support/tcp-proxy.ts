/**
 * A TCP proxy on 127.0.0.1 that can be cut: `cut()` destroys every proxied connection and stops
 * listening, so new connections are refused (what a client sees while a database restarts);
 * `restore()` listens again on the same port.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let server: net.Server | undefined;

  function listen(port: number): Promise<net.Server> {
    const s = net.createServer((client) => {
      accepted += 1;
      const upstream = net.connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve(s));
    });
  }

  server = await listen(0);
  const port = (server.address() as net.AddressInfo).port;

  async function stopListening() {
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  return {
    port,
    accepted: () => accepted,
    async cut() {
      const closing = stopListening();
      for (const socket of sockets) socket.destroy();
      await closing;
    },
    async restore() {
      server ??= await listen(port);
    },
    async close() {
      const closing = stopListening();
      for (const socket of sockets) socket.destroy();
      await closing;
    },
  };
}

/** A proxy in front of the PostgreSQL server of `databaseUrl`, and that URL through it. */
export async function proxyDatabase(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const url = new URL(databaseUrl);
  const proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return { proxy, url: url.toString() };
}
