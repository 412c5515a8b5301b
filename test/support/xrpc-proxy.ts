import * as http from 'node:http';
import type * as net from 'node:net';

/**
 * A loopback HTTP proxy between Herald and a PDS. It counts the XRPC calls by method (to prove,
 * say, that 50 posts took one `createSession`), and can "lose" answers: for a chosen method it
 * forwards the request, lets the PDS do the work, and then destroys the client's socket instead
 * of answering — the lost response after a successful write that idempotent record keys exist for.
 */
export interface XrpcProxy {
  url: string;
  calls(method: string): number;
  /**
   * The next `count` calls of `method` are forwarded and then answered with a dropped connection;
   * with `skip`, the `skip` calls before them are answered normally (lose the 3rd: skip 2).
   */
  dropResponses(method: string, count: number, skip?: number): void;
  /** How many answers were dropped so far. */
  dropped(method: string): number;
  close(): Promise<void>;
}

export async function startXrpcProxy(targetUrl: string): Promise<XrpcProxy> {
  const target = new URL(targetUrl);
  const counts = new Map<string, number>();
  const toDrop = new Map<string, number>();
  const toSkip = new Map<string, number>();
  const droppedCounts = new Map<string, number>();
  const sockets = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    const method = (req.url ?? '').replace(/^\/xrpc\//, '').split('?')[0] ?? '';
    counts.set(method, (counts.get(method) ?? 0) + 1);
    const skip = (toSkip.get(method) ?? 0) > 0;
    if (skip) toSkip.set(method, (toSkip.get(method) ?? 0) - 1);
    const drop = !skip && (toDrop.get(method) ?? 0) > 0;
    if (drop) toDrop.set(method, (toDrop.get(method) ?? 0) - 1);
    const upstream = http.request(
      { hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
      (up) => {
        if (drop) {
          // The PDS has answered, so the write is done: read its answer to the end, then cut the
          // client off without a byte of it.
          up.resume();
          up.on('end', () => {
            droppedCounts.set(method, (droppedCounts.get(method) ?? 0) + 1);
            req.socket.destroy();
          });
          return;
        }
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => req.socket.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls: (method) => counts.get(method) ?? 0,
    dropResponses: (method, count, skip = 0) => {
      toSkip.set(method, skip);
      toDrop.set(method, count);
    },
    dropped: (method) => droppedCounts.get(method) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
