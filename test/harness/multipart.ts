// Hand-built multipart bodies sent over a raw HTTP connection, for tests that need what fetch
// will not send: no boundary, a truncated body, a body without Content-Length, a client that
// goes away mid-upload. Times the answer from the moment the request starts.
import http from 'node:http';

export interface Part {
  name: string;
  filename?: string;
  type?: string;
  body: Buffer | string;
}

export const BOUNDARY = '----pictor-test-boundary-7f3a9c';

export function multipartBody(parts: Part[], options: { close?: boolean } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const type = part.filename !== undefined ? `Content-Type: ${part.type ?? 'application/octet-stream'}\r\n` : '';
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`));
    chunks.push(Buffer.isBuffer(part.body) ? part.body : Buffer.from(part.body));
    chunks.push(Buffer.from('\r\n'));
  }
  if (options.close !== false) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export interface RawAnswer {
  status: number;
  body: any;
  headers: http.IncomingHttpHeaders;
  /** Milliseconds from the start of the request to the complete answer. */
  ms: number;
}

export interface RawRequest {
  url: string;
  body: Buffer;
  headers?: Record<string, string>;
  contentType?: string;
  method?: string;
  /** Send without Content-Length (chunked). */
  chunked?: boolean;
  /** Stop sending after this many bytes and destroy the connection (resolves with status 0). */
  abortAfter?: number;
}

/** Writes the body in 64 kB pieces (as a client on a network would); resolves with the answer. */
export function sendRaw(args: RawRequest): Promise<RawAnswer> {
  const started = Date.now();
  const url = new URL(args.url);
  const headers: Record<string, string | number> = { 'Content-Type': args.contentType ?? `multipart/form-data; boundary=${BOUNDARY}`, ...args.headers };
  if (args.chunked) headers['Transfer-Encoding'] = 'chunked'; // Node sends DELETE bodies unframed otherwise
  else if (args.abortAfter === undefined) headers['Content-Length'] = args.body.length;
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: args.method ?? 'POST', headers, agent: false });
    let answered = false;
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        answered = true;
        const text = Buffer.concat(chunks).toString('utf8');
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers, ms: Date.now() - started });
      });
    });
    // The server may answer and stop reading before the whole body is written.
    req.on('error', (err) => (answered || args.abortAfter !== undefined ? undefined : reject(err)));
    const limit = args.abortAfter ?? args.body.length;
    let offset = 0;
    const writeMore = () => {
      while (offset < limit) {
        const piece = args.body.subarray(offset, Math.min(limit, offset + 64 * 1024));
        offset += piece.length;
        if (!req.write(piece)) return void req.once('drain', writeMore);
      }
      if (args.abortAfter !== undefined) {
        setTimeout(() => {
          req.destroy();
          resolve({ status: 0, body: null, headers: {}, ms: Date.now() - started });
        }, 50);
      } else req.end();
    };
    writeMore();
  });
}
