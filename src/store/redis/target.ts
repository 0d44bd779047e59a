/**
 * Where Redis is: one server by URL, a Sentinel group, or a Redis Cluster's startup nodes;
 * credentials and TLS beside it.
 * Apart from the client so the config and the logs can name it without loading ioredis.
 */
export interface RedisTarget {
  /** redis://[user:pass@]host:port[/db], or rediss:// for TLS. Unused with sentinels or cluster. */
  url?: string;
  sentinels?: { host: string; port: number }[];
  /** A Redis Cluster's startup nodes: the client learns the others (and who serves which slot) from them. */
  cluster?: { host: string; port: number }[];
  /** The Sentinel group's name (sentinel monitor <name> ...). */
  name?: string;
  username?: string;
  password?: string;
  sentinel_password?: string;
  tls?: { ca_file?: string; servername?: string; sentinels?: boolean };
}

/** The target for messages and logs: never a password. */
export function describeTarget(target: RedisTarget): string {
  if (target.cluster) return `Redis Cluster (${target.cluster.map((s) => `${s.host}:${s.port}`).join(", ")})`;
  if (target.sentinels) return `Sentinel group "${target.name}" (${target.sentinels.map((s) => `${s.host}:${s.port}`).join(", ")})`;
  return (target.url ?? "").replace(/\/\/([^@/]*):([^@/]*)@/, "//$1:***@");
}
