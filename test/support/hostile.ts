import * as net from 'node:net';

/**
 * Servers that misbehave on purpose, on loopback, at the TCP level (Node's http server would not
 * let us send garbage, trickle a status line or overflow headers). Each connection gets the
 * request read (up to its blank line and body, as announced by content-length), then `behaviour`.
 */

export interface RawServer {
  url: string;
  port: number;
  /** Requests received (their head, as text). */
  readonly requests: string[];
  /** Connections the client closed or reset while we were still writing. */
  readonly clientHangUps: () => number;
  /** The request lines (`GET /path HTTP/1.1`) of those connections. */
  readonly hungUp: string[];
  close(): Promise<void>;
}

export type Behaviour = (socket: net.Socket, request: string) => void;

export async function startRawServer(behaviour: Behaviour): Promise<RawServer> {
  const sockets = new Set<net.Socket>();
  const requests: string[] = [];
  const hungUp: string[] = [];
  // allowHalfOpen: Node would otherwise end our side as soon as the client's FIN arrives, and a
  // hang-up in the middle of a trickle would look like an answer we had finished.
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    let buffered = Buffer.alloc(0);
    let answered = false;
    let requestLine = '';
    let recorded = false;
    /** The client left (FIN, reset, broken pipe) before our answer was complete. */
    const hangUp = (): void => {
      if (answered && !recorded && !socket.writableEnded) {
        recorded = true;
        hungUp.push(requestLine);
      }
    };
    socket.on('error', hangUp);
    socket.on('end', () => {
      hangUp();
      socket.destroy();
    });
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? '0');
      if (buffered.length < end + 4 + length) return;
      answered = true;
      requestLine = head.split('\r\n')[0] ?? '';
      requests.push(head);
      behaviour(socket, head);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    clientHangUps: () => hungUp.length,
    hungUp,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Writes `bytes` one at a time, every `intervalMs`, until done or the client goes away. */
export function trickle(bytes: string | Buffer, intervalMs: number): Behaviour {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes;
  return (socket) => {
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || i >= data.length) {
        clearInterval(timer);
        if (!socket.destroyed) socket.end();
        return;
      }
      socket.write(data.subarray(i, i + 1));
      i += 1;
    }, intervalMs);
    timer.unref();
    socket.on('close', () => clearInterval(timer));
  };
}

/** Bytes that are not HTTP, then the connection closes. */
export const garbage: Behaviour = (socket) => {
  socket.end(Buffer.from('\u0000\u00ff\u0013 this is not HTTP at all \u0007\r\n\r\n', 'latin1'));
};

/** A 200 whose headers go on and on (`bytes` of them). */
export function enormousHeaders(bytes: number): Behaviour {
  return (socket) => {
    const line = `x-filler: ${'a'.repeat(1000)}\r\n`;
    const lines = Math.ceil(bytes / line.length);
    socket.write('HTTP/1.1 200 OK\r\n');
    let i = 0;
    const pump = (): void => {
      while (i < lines && !socket.destroyed) {
        i += 1;
        if (!socket.write(line)) {
          socket.once('drain', pump);
          return;
        }
      }
      if (!socket.destroyed) socket.end('content-length: 0\r\n\r\n');
    };
    pump();
  };
}

/** A status and headers, then a body that never ends (chunked, written as fast as it is read). */
export function endlessBody(status = 200, contentType = 'text/plain', prefix = ''): Behaviour {
  return (socket) => {
    socket.write(`HTTP/1.1 ${status} OK\r\ncontent-type: ${contentType}\r\ntransfer-encoding: chunked\r\n\r\n`);
    const chunk = (data: string): string => `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
    if (prefix !== '') socket.write(chunk(prefix));
    const filler = chunk('x'.repeat(16 * 1024));
    const pump = (): void => {
      while (!socket.destroyed) {
        if (!socket.write(filler)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    pump();
  };
}
