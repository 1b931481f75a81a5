#!/usr/bin/env bash
# fuzz.sh — runs every fuzz target of the module for a set time each (make fuzz; nightly, not CI).
#
#   scripts/fuzz.sh [FUZZTIME]      FUZZTIME as go test's -fuzztime (default 1m)
#
# Go fuzzes one target of one package per run, so the script lists the targets package by package
# (go test -list) and runs them one after another. New inputs that fail are written under the
# package's testdata/fuzz/<Target>/ by go test; commit them with the fix so they stay regression
# tests of the ordinary test run.
set -euo pipefail

FUZZTIME="${1:-1m}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

ran=0
failed=()
for pkg in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "fuzz: $pkg $target for $FUZZTIME" >&2
    ran=$((ran + 1))
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"; then
      failed+=("$pkg $target")
    fi
  done
done
if [[ $ran -eq 0 ]]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  printf 'fuzz: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz: $ran targets, $FUZZTIME each, no failure" >&2
