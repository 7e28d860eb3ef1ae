/** Where the API is, and what to send with each request. */
export interface Client {
  /** The server's origin and path prefix, such as `http://127.0.0.1:8080`; `""` for the page's own. */
  baseUrl: string;
  /** A bearer token, sent as `Authorization: Bearer …` to the operations that take one. */
  bearer?: string;
  /** The CSRF token, sent as `x-csrf-token` to the operations that check one. */
  csrfToken?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** The `fetch` to call; the global one by default. */
  fetch?: typeof fetch;
}

/** A success (`1xx` to `3xx`): its status and body. */
export interface Ok<S extends number, T> {
  ok: true;
  status: S;
  data: T;
}

/** A refusal or a failure (`4xx`, `5xx`): its status and body. */
export interface Err<S extends number, E> {
  ok: false;
  status: S;
  error: E;
}

type Values = Record<string, string | number | boolean | null | undefined | Array<string | number | boolean>>;

type Body =
  | { kind: "json"; value: unknown }
  | { kind: "form"; value: unknown }
  | { kind: "multipart"; value: FormData }
  | { kind: "text"; value: string }
  | { kind: "bytes"; value: Blob | ArrayBuffer };

/** Sends one request and reads its answer: JSON parsed, text as a string, other bytes as an `ArrayBuffer`. */
async function send(
  client: Client,
  method: string,
  path: string,
  query: Values,
  headerParams: Values,
  body: Body | undefined,
  auth: { bearer: boolean; csrf: boolean },
): Promise<Ok<number, unknown> | Err<number, unknown>> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null) search.append(name, String(one));
    }
  }
  const qs = search.toString();
  const url = client.baseUrl.replace(/\/+$/, "") + path + (qs ? `?${qs}` : "");
  const headers: Record<string, string> = { ...client.headers };
  for (const [name, value] of Object.entries(headerParams)) {
    if (value !== undefined && value !== null) headers[name] = String(value);
  }
  if (auth.bearer && client.bearer !== undefined) headers["authorization"] = `Bearer ${client.bearer}`;
  if (auth.csrf && client.csrfToken !== undefined) headers["x-csrf-token"] = client.csrfToken;
  let payload: BodyInit | undefined;
  if (body !== undefined) {
    switch (body.kind) {
      case "json":
        headers["content-type"] = "application/json";
        payload = JSON.stringify(body.value);
        break;
      case "form": {
        headers["content-type"] = "application/x-www-form-urlencoded";
        const fields = new URLSearchParams();
        for (const [name, value] of Object.entries(body.value as Values)) {
          if (value !== undefined && value !== null) fields.append(name, String(value));
        }
        payload = fields;
        break;
      }
      case "text":
        headers["content-type"] = "text/plain; charset=utf-8";
        payload = body.value;
        break;
      case "bytes":
        headers["content-type"] = "application/octet-stream";
        payload = body.value;
        break;
      case "multipart":
        payload = body.value;
        break;
    }
  }
  const res = await (client.fetch ?? fetch)(url, { method, headers, body: payload });
  const type = res.headers.get("content-type") ?? "";
  let value: unknown;
  if (/^application\/([\w.-]+\+)?json\b/.test(type)) {
    const text = await res.text();
    value = text === "" ? undefined : JSON.parse(text);
  } else if (type === "" || type.startsWith("text/")) {
    const text = await res.text();
    value = text === "" && res.status < 400 ? undefined : text;
  } else {
    value = await res.arrayBuffer();
  }
  return res.status < 400 ? { ok: true, status: res.status, data: value } : { ok: false, status: res.status, error: value };
}
