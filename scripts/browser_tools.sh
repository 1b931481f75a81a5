#!/usr/bin/env bash
# browser_tools.sh — what the demo page's browser test (service/ui, TestPageInChromium) needs:
#
#   chromium         Debian's chromium package, installed with apt-get when missing and we are root
#                    (otherwise the script says what to install). Nothing downloads a browser.
#   playwright-core  the version pinned in service/ui/browsertest/package-lock.json, installed with
#                    `npm ci` into service/ui/browsertest/node_modules (gitignored) when missing or
#                    of another version. playwright-core has no install script and fetches no
#                    browser; it drives the chromium above through executablePath.
#
# Idempotent: run again, it only checks. `make test` runs it (make browser-tools).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/service/ui/browsertest"

log() { printf 'browser_tools: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }

ensure_chromium() {
  if [[ -n "${OCRGATE_CHROMIUM:-}" ]]; then
    [[ -x "$OCRGATE_CHROMIUM" ]] || die "OCRGATE_CHROMIUM=$OCRGATE_CHROMIUM is not an executable"
    return
  fi
  if ! command -v chromium >/dev/null 2>&1; then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
      log "chromium missing: installing Debian's chromium package"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
    else
      die "chromium is missing: install Debian's chromium package (sudo apt-get install chromium), or point OCRGATE_CHROMIUM at a Chromium, then run again"
    fi
  fi
  log "$(chromium --version 2>/dev/null | head -1)"
}

ensure_playwright() {
  command -v node >/dev/null 2>&1 || die "node is missing: install Node.js 20 or later (Debian: apt-get install nodejs npm)"
  command -v npm >/dev/null 2>&1 || die "npm is missing: install npm"
  local want got
  want="$(node -e 'console.log(require(process.argv[1]).packages["node_modules/playwright-core"].version)' "$DIR/package-lock.json")"
  got="$(node -e 'try { console.log(require(process.argv[1]).version) } catch { console.log("") }' "$DIR/node_modules/playwright-core/package.json")"
  if [[ "$got" == "$want" ]]; then
    return
  fi
  log "installing playwright-core $want (npm ci)"
  (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error) >&2 ||
    die "npm ci failed in service/ui/browsertest (it needs the npm registry, or the package in npm's cache)"
}

ensure_chromium
ensure_playwright
