/**
 * Sealing of the router's compaction items: authenticated encryption (AES-256-GCM, a random
 * 96-bit nonce per item) so a client can neither read a summary nor forge or alter one.
 * A sealed value is `rrc1.` + base64url(nonce | ciphertext | tag). The prefix names the
 * format and key derivation, so a later format can be told apart (and an item sealed by
 * OpenAI, which has no such prefix, is recognised as not the router's). The key is derived
 * from the configured secret with HKDF-SHA256: every instance with the same secret opens
 * every other instance's items. Pure but for the nonce; never logs.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export const SEAL_PREFIX = "rrc1.";
const NONCE = 12;
const TAG = 16;
const AAD = Buffer.from("responses-router compaction v1");

export class Sealer {
  private readonly key: Buffer;

  constructor(secret: string | Buffer) {
    if (secret.length === 0) throw new Error("the compaction key is empty");
    this.key = Buffer.from(hkdfSync("sha256", secret, "responses-router", "compaction v1", 32));
  }

  /** A fresh sealer with a random secret: items it seals open only in this process. */
  static ephemeral(): Sealer {
    return new Sealer(randomBytes(32));
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(NONCE);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return SEAL_PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64url");
  }

  /** The plaintext, or null when the value is not this format, was sealed with another key, or was altered. */
  open(sealed: string): string | null {
    if (!isRouterSealed(sealed)) return null;
    const raw = Buffer.from(sealed.slice(SEAL_PREFIX.length), "base64url");
    if (raw.length < NONCE + TAG) return null;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, NONCE));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(raw.length - TAG));
      return Buffer.concat([decipher.update(raw.subarray(NONCE, raw.length - TAG)), decipher.final()]).toString("utf8");
    } catch {
      return null;
    }
  }
}

/** Whether a value has the router's sealed format (not whether it opens). */
export function isRouterSealed(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(SEAL_PREFIX);
}

/** What a router compaction item carries, sealed: the summary the model wrote. */
interface SealedSummary {
  v: 1;
  summary: string;
}

export function sealSummary(sealer: Sealer, summary: string): string {
  const payload: SealedSummary = { v: 1, summary };
  return sealer.seal(JSON.stringify(payload));
}

/** The summary inside a router compaction item, or null when it cannot be opened. */
export function openSummary(sealer: Sealer, sealed: unknown): string | null {
  if (!isRouterSealed(sealed)) return null;
  const text = sealer.open(sealed);
  if (text === null) return null;
  try {
    const payload = JSON.parse(text) as Partial<SealedSummary>;
    return payload.v === 1 && typeof payload.summary === "string" ? payload.summary : null;
  } catch {
    return null;
  }
}
