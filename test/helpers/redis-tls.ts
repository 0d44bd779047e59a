import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";
import { freePort } from "./redis-server.js";

export interface TlsRedisHandle {
  /** rediss://127.0.0.1:<port> (no password in it). */
  url: string;
  /** The test CA that signed the server's certificate (PEM file). */
  caFile: string;
  password: string;
  stop(): Promise<void>;
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8" });
  if (r.error || r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.error?.message ?? r.stderr}`);
}

/**
 * A real redis-server speaking only TLS on a free loopback port, with a certificate for
 * 127.0.0.1 signed by a throw-away CA (made with the openssl CLI) and a requirepass.
 */
export async function startTlsRedis(password: string): Promise<TlsRedisHandle> {
  const dir = mkdtempSync(join(tmpdir(), "rr-redis-tls-"));
  run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=rr-test-ca"], dir);
  run("openssl", ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"], dir);
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  run("openssl", ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf"], dir);
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", "0", "--tls-port", String(port), "--bind", "127.0.0.1", "--tls-cert-file", "server.pem", "--tls-key-file", "server.key", "--tls-ca-cert-file", "ca.pem", "--tls-auth-clients", "no", "--requirepass", password, "--save", "", "--appendonly", "no", "--dir", dir],
    { cwd: dir, stdio: "ignore" },
  );
  const ca = join(dir, "ca.pem");
  const deadline = Date.now() + 10_000;
  // Up once a TLS handshake with the CA succeeds.
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = tls.connect({ host: "127.0.0.1", port, ca: readFileSync(ca) }, () => {
        sock.destroy();
        resolve(true);
      });
      sock.on("error", () => resolve(false));
    });
    if (ok) break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`redis-server with TLS did not start on port ${port}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `rediss://127.0.0.1:${port}`,
    caFile: ca,
    password,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
