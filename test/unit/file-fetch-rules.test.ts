import { describe, expect, it } from "vitest";
import { globMatch, isPrivate } from "../../src/responses/files/fetch-files.js";

describe("file_url fetch rules", () => {
  it("allow patterns: * matches any run of characters, the rest literally (case-insensitive)", () => {
    expect(globMatch("https://files.example.com/*", "https://files.example.com/a/b.pdf")).toBe(true);
    expect(globMatch("https://files.example.com/*", "https://files.example.com.evil.net/a")).toBe(false);
    expect(globMatch("https://*.example.com/docs/*", "https://cdn.example.com/docs/x.txt")).toBe(true);
    expect(globMatch("https://*.example.com/docs/*", "https://cdn.example.com/other/x.txt")).toBe(false);
    expect(globMatch("http://127.0.0.1:*/files/*", "http://127.0.0.1:4000/files/n.txt")).toBe(true);
    expect(globMatch("https://a.example/x?y", "https://a.example/xzy")).toBe(false);
  });

  it("loopback, private, link-local, CGNAT and unspecified addresses are private, v4 and v6 (mapped too)", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"]) {
      expect(isPrivate(a), a).toBe(true);
    }
    for (const a of ["8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"]) expect(isPrivate(a), a).toBe(false);
  });
});
