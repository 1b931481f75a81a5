#!/usr/bin/env bash
# offline_base_images.sh — makes the two base images the Dockerfile starts from, on this machine,
# without a container registry:
#
#   scripts/offline_base_images.sh [--force] [--mirror URL] [--ca-bundle FILE] [--goroot DIR]
#
#   debian:<release>-slim       Debian <release> (debootstrap --variant=minbase) with security and
#                               point-release updates applied, documentation, man pages and
#                               translations left out as in Debian's official slim images
#   golang:<go>-<release>       that, plus gcc, libc6-dev, ca-certificates and a Go toolchain copied
#                               from this machine (GOROOT /usr/local/go, GOPATH /go, GOTOOLCHAIN=local)
#
# <release> and <go> are the Dockerfile's ARG defaults (DEBIAN_RELEASE, GO_VERSION), so after this
# `scripts/build_docker_image.sh cpu|gpu` builds with no registry at all. It is the path for a
# machine behind a firewall or without a registry mirror: all it needs is a Debian package mirror,
# which it reads from this machine's apt configuration (`apt-get indextargets`; --mirror or
# DEBIAN_MIRROR overrides it), and apt's proxy setting (Acquire::http::Proxy) when http_proxy is unset.
#
# Trust: the golang image's CA bundle (/etc/ssl/certs/ca-certificates.crt) is this machine's bundle
# (--ca-bundle picks another), so `go mod download` inside a build trusts what this machine trusts,
# a TLS-inspecting proxy included. The ocrgate image copies that bundle from the build stage: its
# chat-model calls trust the same certificates.
#
# Images that exist already are kept (--force makes them again). DOCKER names the engine CLI
# (docker or podman; default: docker when its daemon answers, else podman). Needs root (debootstrap
# and chroot) and debootstrap (apt-get install debootstrap). Prints the two image names last.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() {
  echo "offline_base_images: $*" >&2
  exit 1
}
say() { echo "offline_base_images: $*" >&2; }

usage() {
  echo "usage: scripts/offline_base_images.sh [--force] [--mirror URL] [--ca-bundle FILE] [--goroot DIR]" >&2
  exit 1
}

force=false
mirror="${DEBIAN_MIRROR:-}"
ca_bundle="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
goroot=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --force) force=true ;;
    --mirror) [[ $# -ge 2 ]] || usage; mirror="$2"; shift ;;
    --ca-bundle) [[ $# -ge 2 ]] || usage; ca_bundle="$2"; shift ;;
    --goroot) [[ $# -ge 2 ]] || usage; goroot="$2"; shift ;;
    *) usage ;;
  esac
  shift
done

# arg_default NAME — the default of `ARG NAME=value` in the Dockerfile.
arg_default() {
  sed -n "s/^ARG $1=\\([^[:space:]]*\\)\$/\\1/p" "$ROOT/Dockerfile" | head -n 1
}
release="$(arg_default DEBIAN_RELEASE)"
go_version="$(arg_default GO_VERSION)"
[[ -n "$release" && -n "$go_version" ]] ||
  die "cannot read ARG DEBIAN_RELEASE=… and ARG GO_VERSION=… from the Dockerfile"
slim="debian:${release}-slim"
golang="golang:${go_version}-${release}"

[[ "$(id -u)" == 0 ]] || die "run as root (debootstrap and chroot need it)"
command -v debootstrap >/dev/null 2>&1 || die "debootstrap is missing: apt-get install debootstrap"
[[ -r "$ca_bundle" ]] || die "CA bundle $ca_bundle is not readable (--ca-bundle FILE)"

# The engine: DOCKER, or docker when its daemon answers, or podman.
if [[ -z "${DOCKER:-}" ]]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    DOCKER=docker
  elif command -v podman >/dev/null 2>&1; then
    DOCKER=podman
  else
    die "no container engine: install podman (apt-get install podman runc) or Docker, or set DOCKER"
  fi
fi

# have IMAGE — whether the engine has IMAGE (podman keeps unqualified names under localhost/).
have() {
  "$DOCKER" image inspect "$1" >/dev/null 2>&1 || "$DOCKER" image inspect "localhost/$1" >/dev/null 2>&1
}
if ! $force && have "$slim" && have "$golang"; then
  say "$slim and $golang exist (--force makes them again)"
  echo "$slim"
  echo "$golang"
  exit 0
fi

# The Go toolchain to copy: GOROOT of this machine's go, which must be the Dockerfile's GO_VERSION.
if [[ -z "$goroot" ]]; then
  command -v go >/dev/null 2>&1 || die "no go on PATH to copy into $golang (--goroot DIR)"
  goroot="$(go env GOROOT)"
fi
[[ -x "$goroot/bin/go" ]] || die "$goroot/bin/go is missing (--goroot DIR names a Go installation)"
goversion="$("$goroot/bin/go" env GOVERSION)"
case "$goversion" in
  "go$go_version" | "go$go_version".*) ;;
  *) die "the Dockerfile builds with Go $go_version but $goroot is $goversion (--goroot DIR, or change ARG GO_VERSION)" ;;
esac

# Debian mirrors from apt's own configuration: repo URI of each (suite, component main) it reads.
# apt_uri SUITE — the first configured URI that serves SUITE main for deb packages, or nothing.
apt_uri() {
  apt-get indextargets --format '$(TARGET_OF) $(RELEASE) $(COMPONENT) $(REPO_URI)' 'Identifier: Packages' 2>/dev/null |
    awk -v suite="$1" '$1 == "deb" && $2 == suite && $3 == "main" { print $4; exit }'
}
if [[ -z "$mirror" ]]; then
  command -v apt-get >/dev/null 2>&1 || die "no apt here to read a Debian mirror from: pass --mirror URL"
  mirror="$(apt_uri "$release")"
  [[ -n "$mirror" ]] ||
    die "apt is not configured for Debian $release main (apt-get indextargets lists none): pass --mirror URL"
fi
mirror="${mirror%/}"
updates="$(apt_uri "$release-updates" || true)"
security="$(apt_uri "$release-security" || true)"
# apt's proxy, for debootstrap's downloads, unless one is set already.
if [[ -z "${http_proxy:-}" ]] && command -v apt-config >/dev/null 2>&1; then
  eval "$(apt-config shell http_proxy Acquire::http::Proxy)"
  [[ -z "${http_proxy:-}" ]] || export http_proxy
fi

work="$(mktemp -d /var/tmp/ocrgate-rootfs.XXXXXX)"
rootfs="$work/rootfs"
cleanup() {
  local m
  for m in "$rootfs/proc" "$rootfs/dev/pts"; do
    if mountpoint -q "$m" 2>/dev/null; then umount -l "$m" || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT

arch="$(dpkg --print-architecture)"
say "debootstrap --variant=minbase $release ($arch) from the mirror apt uses"
start=$SECONDS
debootstrap --variant=minbase --arch="$arch" "$release" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 30 "$work/debootstrap.log" >&2
  die "debootstrap failed (log above)"
}

# Leave out what Debian's slim images leave out, for this install and every later one.
cat >"$rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
# Debian slim image: no documentation (copyright notices kept), manuals or translations.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF

# And no package caches, as in Debian's official images: downloaded packages go after each dpkg
# run, and apt's binary caches of the package lists stay in memory.
cat >"$rootfs/etc/apt/apt.conf.d/image-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
EOF

{
  echo "deb $mirror $release main"
  [[ -z "$updates" ]] || echo "deb ${updates%/} $release-updates main"
  [[ -z "$security" ]] || echo "deb ${security%/} $release-security main"
} >"$rootfs/etc/apt/sources.list"

# in_root CMD... — runs CMD in the new root with /proc, the network's name resolution and a CA
# bundle (for an https mirror) borrowed from this machine.
in_root() {
  mountpoint -q "$rootfs/proc" || mount -t proc proc "$rootfs/proc"
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  chroot "$rootfs" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    ${http_proxy:+http_proxy="$http_proxy"} "$@"
}
# cleanup_root — what no image should carry: apt's lists and caches, logs, this machine's names.
cleanup_root() {
  if mountpoint -q "$rootfs/proc"; then umount -l "$rootfs/proc"; fi
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/cache/apt/archives/partial/* "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/lib/dpkg/*-old \
    "$rootfs"/var/log/apt/* "$rootfs"/var/log/dpkg.log "$rootfs"/var/log/alternatives.log "$rootfs"/var/log/bootstrap.log \
    "$rootfs"/tmp/*
  # The cache in the image's root home, wherever the image's passwd puts it.
  local home
  home="$(awk -F: '$3 == 0 { print $6; exit }' "$rootfs/etc/passwd" 2>/dev/null || true)"
  if [ -n "$home" ] && [ "$home" != / ]; then rm -rf "$rootfs$home/.cache"; fi
  : >"$rootfs/etc/resolv.conf"
  : >"$rootfs/etc/hostname"
  : >"$rootfs/etc/machine-id" 2>/dev/null || true
}

# Bring the ssl directory in only for apt (an https mirror) when the image would not have it.
borrowed_ca=false
if [[ ! -e "$rootfs/etc/ssl/certs/ca-certificates.crt" ]]; then
  mkdir -p "$rootfs/etc/ssl/certs"
  cp "$ca_bundle" "$rootfs/etc/ssl/certs/ca-certificates.crt"
  borrowed_ca=true
fi
in_root apt-get update -qq >>"$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log" >&2; die "apt-get update in the new root failed"; }
in_root apt-get -y -qq -o Dpkg::Options::=--force-confold upgrade >>"$work/apt.log" 2>&1 ||
  { tail -n 30 "$work/apt.log" >&2; die "apt-get upgrade in the new root failed"; }
# What the path-exclude rules above keep out from now on, removed from what debootstrap installed.
find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/linda/* \
  "$rootfs"/usr/share/lintian/overrides/* "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/man/*
if $borrowed_ca; then rm -f "$rootfs/etc/ssl/certs/ca-certificates.crt"; rmdir "$rootfs/etc/ssl/certs" 2>/dev/null || true; fi
cleanup_root

path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# import IMAGE CHANGES... — imports the root as IMAGE, replacing an older image of that name.
import() {
  local image="$1"
  shift
  local changes=() c
  for c in "$@"; do changes+=(--change "$c"); done
  # /dev empty, as in Debian's official images: the engine populates it at run time, and an
  # image's /dev/shm would lend its mode to a volume mounted there.
  tar --numeric-owner --xattrs -C "$rootfs" --exclude='./dev/*' -c . |
    "$DOCKER" import "${changes[@]}" - "$image" >"$work/import.log" 2>&1 || {
    cat "$work/import.log" >&2
    die "$DOCKER import $image failed"
  }
}
import "$slim" "ENV PATH=$path" 'CMD ["bash"]'
say "$slim made ($((SECONDS - start)) s)"

# The Go image: the same root plus the C toolchain cgo needs and this machine's Go.
start=$SECONDS
in_root apt-get update -qq >>"$work/apt.log" 2>&1 || { tail -n 30 "$work/apt.log" >&2; die "apt-get update in the new root failed"; }
in_root apt-get install -y -qq --no-install-recommends ca-certificates gcc libc6-dev >>"$work/apt.log" 2>&1 ||
  { tail -n 30 "$work/apt.log" >&2; die "installing gcc, libc6-dev and ca-certificates in the new root failed"; }
cp "$ca_bundle" "$rootfs/etc/ssl/certs/ca-certificates.crt"
mkdir -p "$rootfs/usr/local/go" "$rootfs/go/bin" "$rootfs/go/src"
# The toolchain without its own test suite; owned by root, like the official image's.
tar -C "$goroot" --exclude=./test -c . | tar -C "$rootfs/usr/local/go" --no-same-owner -x
chmod -R 1777 "$rootfs/go"
cleanup_root
import "$golang" \
  "ENV PATH=/go/bin:/usr/local/go/bin:$path" \
  "ENV GOLANG_VERSION=${goversion#go}" \
  "ENV GOPATH=/go" \
  "ENV GOTOOLCHAIN=local" \
  "WORKDIR /go" \
  'CMD ["bash"]'
say "$golang made ($((SECONDS - start)) s; Go ${goversion#go} from $goroot)"

echo "$slim"
echo "$golang"
