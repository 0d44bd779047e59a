#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { runCli } from "../cli.js";
import { DEMO_MODEL, startDemoBackend } from "./backend.js";
import { DEMO_EMBEDDING_MODEL } from "./embeddings.js";

/**
 * `npm run demo`: the router with router.demo.yaml in front of the built-in demo backend
 * (canned answers on loopback), so the first request answers without any LLM installed.
 * Arguments are the router's (`npm run demo -- --port 9000`).
 */
const demoConfig = fileURLToPath(new URL("../../router.demo.yaml", import.meta.url));

async function demo(): Promise<number> {
  const backend = await startDemoBackend(Number(process.env.DEMO_BACKEND_PORT ?? 0));
  // router.demo.yaml reads the backend's port from here (it is free-chosen unless set).
  process.env.DEMO_BACKEND_PORT = String(backend.port);
  try {
    return await runCli(["--config", demoConfig, ...process.argv.slice(2)], {
      onListening(log, url) {
        log.info({ backend: backend.url, model: DEMO_MODEL }, "DEMO: model \"demo\" is served by the built-in demo backend (canned answers, not a real model)");
        log.info({ model: DEMO_EMBEDDING_MODEL }, `DEMO: file_search embeds with "${DEMO_EMBEDDING_MODEL}": deterministic demo vectors (hashed words), not a real embedding model`);
        log.info(
          `try: curl -s ${url}/v1/responses -H 'content-type: application/json' -d '{"model":"${DEMO_MODEL}","input":"Say hi"}'`,
        );
      },
    });
  } finally {
    await backend.close();
  }
}

demo().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
