/**
 * The admin API as the console calls it. The admin key lives in sessionStorage (this tab's
 * session only: never localStorage, a cookie or a URL) and goes in the Authorization header,
 * which another origin's page cannot make the browser send.
 */
const STORE = "rr-console-admin-key";

export const session = {
  key: (): string | null => sessionStorage.getItem(STORE),
  signIn: (key: string) => sessionStorage.setItem(STORE, key),
  signOut: () => sessionStorage.removeItem(STORE),
};

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Called when the key is refused (401/403): the app signs out and says why. */
let onRefused: (message: string) => void = () => {};
export function whenRefused(fn: (message: string) => void): void {
  onRefused = fn;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const key = session.key();
  const res = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${key ?? ""}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  const data = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!res.ok) {
    const message = data.error?.message ?? `HTTP ${res.status}`;
    if (res.status === 401 || res.status === 403) onRefused(message);
    throw new ApiFailure(res.status, message);
  }
  return data as T;
}

/** Today as the router counts usage days (UTC). */
export const utcDay = (offsetDays = 0) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

export interface UsageRow {
  date?: string;
  key: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}
export interface UsageAnswer {
  from: string;
  to: string;
  data: UsageRow[];
  totals: UsageRow[];
}
export const usage = (from: string, to: string, key?: string) =>
  api<UsageAnswer>("GET", `/v1/usage?from=${from}&to=${to}${key === undefined ? "" : `&key=${encodeURIComponent(key)}`}`);
