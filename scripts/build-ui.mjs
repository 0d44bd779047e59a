// Bundles the console (ui/) into dist/ui/: app.js (ES module, minified), app.css (its styles and
// uPlot's) and index.html. Run by `npm run build`; the router serves the result at /ui/.
// Prints the bundle's sizes (raw and gzip) for BENCHMARKS.md. Tests import buildConsole().
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Builds the console into `outdir` (default dist/ui/); returns each file's raw and gzip bytes. */
export async function buildConsole(outdir = `${root}dist/ui`) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: { app: `${root}ui/main.ts` },
    bundle: true,
    format: "esm",
    target: ["chrome110", "firefox110", "safari16"],
    minify: true,
    outdir,
    logLevel: "warning",
    legalComments: "none",
  });
  copyFileSync(`${root}ui/index.html`, `${outdir}/index.html`);
  const sizes = {};
  for (const name of ["index.html", "app.js", "app.css"]) {
    const bytes = readFileSync(`${outdir}/${name}`);
    sizes[name] = { bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  }
  return sizes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sizes = await buildConsole(process.argv[2]);
  if (process.env.UI_SIZES) for (const [name, s] of Object.entries(sizes)) console.log(`${name}\t${s.bytes} B\t${s.gzip} B gzip`);
}
