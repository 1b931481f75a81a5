#!/usr/bin/env bash
# container_engine.sh — makes sure a container engine can build and run ocrgate's images here, and
# prints its CLI (docker or podman) on stdout:
#
#   DOCKER="$(scripts/container_engine.sh)"
#
# - DOCKER set: that CLI, as it is.
# - A Docker daemon answers `docker info`: docker.
# - Otherwise podman, installed with apt-get (as root) when missing, together with what the image
#   test and scripts/offline_base_images.sh use: runc (podman's runtime here: crun fails on hosts
#   with hybrid cgroups), debootstrap (base images without a registry), the dnsname CNI plugin
#   (compose service names resolve between containers) and catatonit (the init of a pod's infra
#   container, which `podman kube play` needs).
# - Podman's engine settings, when /etc/containers/containers.conf does not exist, are written
#   there: the runc runtime, and no default ulimits (podman's default raises the open-files limit
#   above what an unprivileged host, or a container host, allows, and every container then fails to
#   start). An existing containers.conf is left as it is.
set -euo pipefail

say() { echo "container_engine: $*" >&2; }
die() {
  say "$*"
  exit 1
}

if [[ -n "${DOCKER:-}" ]]; then
  command -v "$DOCKER" >/dev/null 2>&1 || die "DOCKER=$DOCKER is not on PATH"
  echo "$DOCKER"
  exit 0
fi
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  echo docker
  exit 0
fi

# Debian packages podman needs here, by the command (or file) that shows each is installed.
declare -A PACKAGES=(
  [podman]=/usr/bin/podman
  [runc]=/usr/sbin/runc
  [debootstrap]=/usr/sbin/debootstrap
  [golang-github-containernetworking-plugin-dnsname]=/usr/lib/cni/dnsname
  [catatonit]=/usr/bin/catatonit
)
missing=()
for pkg in "${!PACKAGES[@]}"; do
  [[ -e "${PACKAGES[$pkg]}" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    die "no Docker daemon answers and podman is not set up; as root on Debian this script installs: ${missing[*]}"
  fi
  say "no Docker daemon answers: installing ${missing[*]} with apt-get"
  # Another apt run (another session's install) may hold the lock: wait for it.
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

conf=/etc/containers/containers.conf
if [[ ! -e "$conf" ]]; then
  [[ "$(id -u)" == 0 ]] || die "$conf is missing and only root can write it"
  say "writing $conf (runtime runc, no default ulimits)"
  mkdir -p "$(dirname "$conf")"
  cat >"$conf" <<'EOF'
# Written by ocrgate's scripts/container_engine.sh.
[containers]
# Podman's default ulimits raise the open-files limit above what this host allows; without
# defaults, containers inherit the engine's limits.
default_ulimits = []

[engine]
# crun fails on hosts with hybrid (v1 + v2) cgroups; runc works on both.
runtime = "runc"
EOF
fi
echo podman
