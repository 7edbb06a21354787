// Small HTTP helpers over Node's fetch for tests (real HTTP to the running front door).
export interface UploadArgs {
  bytes: Buffer;
  filename?: string;
  mime?: string;
  key?: string;
  query?: Record<string, string>;
  fields?: Record<string, string>;
  path?: string;
  headerName?: string;
}

export async function upload(baseUrl: string, args: UploadArgs): Promise<{ status: number; body: any; headers: Headers }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(args.fields ?? {})) form.append(k, v);
  form.append('file', new Blob([new Uint8Array(args.bytes)], { type: args.mime ?? 'application/octet-stream' }), args.filename ?? 'photo.jpg');
  const qs = args.query ? '?' + new URLSearchParams(args.query).toString() : '';
  const headers: Record<string, string> = {};
  if (args.key) headers[args.headerName ?? 'X-API-Key'] = args.key;
  const res = await fetch(`${baseUrl}${args.path ?? '/upload'}${qs}`, { method: 'POST', body: form, headers });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

export async function request(url: string, init: RequestInit & { key?: string; json?: unknown } = {}) {
  const headers = new Headers(init.headers);
  if (init.key) headers.set('X-API-Key', init.key);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await fetch(url, { ...init, headers, body });
  const buf = Buffer.from(await res.arrayBuffer());
  let json: any = undefined;
  if ((res.headers.get('content-type') ?? '').includes('json')) json = JSON.parse(buf.toString('utf8'));
  return { status: res.status, headers: res.headers, body: json, bytes: buf };
}
