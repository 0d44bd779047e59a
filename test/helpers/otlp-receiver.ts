import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as an OTLP/HTTP JSON export carries it, flattened for assertions. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  links: { traceId: string; spanId: string }[];
  resource: Record<string, unknown>;
}

export const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

export interface OtlpReceiver {
  /** The traces URL to give the exporter (http://127.0.0.1:<port>/v1/traces). */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body received, raw (to check what never appears in spans). */
  bodies: string[];
  /** Request headers of every export (the exporter's own headers). */
  headers: Record<string, string | string[] | undefined>[];
  close(): Promise<void>;
}

/** A collector stand-in on loopback: decodes the OTLP/HTTP JSON the real exporter posts. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const headers: OtlpReceiver["headers"] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    bodies.push(text);
    headers.push(req.headers);
    if (req.url === "/v1/traces" && req.method === "POST") spans.push(...decode(JSON.parse(text)));
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    bodies,
    headers,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

function decode(body: any): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = attrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId || undefined,
          name: s.name,
          kind: s.kind,
          attributes: attrs(s.attributes),
          status: s.status ?? {},
          links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
          resource,
        });
      }
    }
  }
  return out;
}
