# syntax=docker/dockerfile:1
#
# ocrgate container image. Build it with the script, which stages the models first:
#
#   scripts/build_docker_image.sh cpu|gpu        -> ocrgate:cpu-<version> / ocrgate:gpu-<version>
#
# The script stages what the image needs from $OCRGATE_HOME (the models the service and the Triton
# repository load, ONNX Runtime) and the Triton model repository of the variant into
# build/docker/<variant>/ (inside this build context), then runs
#
#   docker build --build-arg VARIANT=cpu|gpu --build-arg VERSION=<version> -t ocrgate:<variant>-<version> .
#
# (podman: the same, with --format docker so that the HEALTHCHECK is kept). No registry at hand, or
# behind a firewall: scripts/offline_base_images.sh makes the two base images below on this machine,
# and GOPROXY/GOSUMDB/GOPRIVATE/GONOSUMDB, when set, reach the Go build as build args.
#
# Image layout (both variants hold everything; the variant picks the Triton configs and the default
# runtime):
#   /usr/local/bin/ocrgate                    the service, listening on :8000
#   /opt/ocrgate/models/                      PP-OCRv4 det/rec, mobile v2.0 cls, dictionary, word list
#   /opt/ocrgate/lib/libonnxruntime.so.1      ONNX Runtime for the embedded runtime (CPU)
#   /opt/ocrgate/model_repository/            Triton model repository, cpu or gpu configs + ONNX files;
#                                             a Triton sidecar gets it by copying it into a shared
#                                             volume (`cp -R /opt/ocrgate/model_repository/. /models/`)
#   /opt/ocrgate/cache/pdfium/                the compiled PDF engine (ocrgate pdf-cache at build time)
#   /models                                   empty, owned by the service user: mount point for that
#                                             shared volume
#
# cpu: OCRGATE_RUNTIME=embedded, works out of the box: docker run -p 8000:8000 ocrgate:cpu-<version>
# gpu: OCRGATE_RUNTIME=triton at localhost:8001; ocrgate itself never uses the GPU (its ONNX Runtime
#      is CPU-only), the image exists to hand the GPU model repository to a Triton beside it.

# Both stages on the same Debian release, so the cgo binary finds the glibc it was linked against.
ARG DEBIAN_RELEASE=bookworm
ARG GO_VERSION=1.26
# cpu or gpu: which Triton repository is baked in and which runtime is the default.
ARG VARIANT=cpu

# ---- build: the Go toolchain, cgo on (ONNX Runtime is loaded with dlopen at run time) ----------------
FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS build
WORKDIR /src
ENV CGO_ENABLED=1 GOFLAGS=-buildvcs=false GOCACHE=/go/cache/build
# The module files first, so the download layer is reused while only sources change; go.mod lists only
# what the service uses (the deployment tests have their own module under deploy/).
# A module proxy or checksum database of your own (behind a firewall); unset means Go's defaults.
ARG GOPROXY
ARG GOSUMDB
ARG GOPRIVATE
ARG GONOSUMDB
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# VERSION only labels the image; the binary's version is the Go constant service.Version. The build
# fails when the two disagree, so a tag can never name another version than the binary prints.
ARG VERSION
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/go/cache/build \
    go build -trimpath -ldflags="-s -w" -o /out/ocrgate ./cmd/ocrgate \
 && got="$(/out/ocrgate version)" \
 && if [ -n "${VERSION}" ] && [ "${got}" != "${VERSION}" ]; then \
      echo "VERSION build arg ${VERSION} differs from service.Version ${got}" >&2; exit 1; \
    fi

# ---- runtime: small glibc base, non-root ----------------------------------------------------------
FROM debian:${DEBIAN_RELEASE}-slim AS runtime
ARG VARIANT
ARG VERSION
# No package is installed, so this stage needs no network and carries no apt lists or caches:
# - the CA bundle for HTTPS calls to the chat model (CHAT_BOT_BASEURL) is the build stage's, the
#   one file of Debian's ca-certificates that Go reads (a TLS-inspecting proxy's CA that the build
#   stage trusts is trusted too: see scripts/offline_base_images.sh);
# - libstdc++6, which libonnxruntime.so.1 needs, is part of the slim base already.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN groupadd --system --gid 65532 ocrgate \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin -K SYS_UID_MAX=65532 -K SYS_GID_MAX=65532 ocrgate \
 && install -d -o 65532 -g 65532 -m 0755 /models
# Models, ONNX Runtime and the Triton repository in one layer, root-owned and read-only to the
# service user. The repository's model.onnx files are hard links to the models they are (the
# build script stages them so), which one COPY keeps: the ONNX files are stored once.
COPY build/docker/${VARIANT}/ /opt/ocrgate/
COPY --from=build /out/ocrgate /usr/local/bin/ocrgate
LABEL org.opencontainers.image.title="ocrgate" \
      org.opencontainers.image.description="OCR inference service (PP-OCRv4), ${VARIANT} variant" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/ocrgate/ocrgate"
# Production settings: JSON logs at info level, container port 8000. Jobs are off: the root
# filesystem is read-only and a container's embedded job store would be its own, unseen by other
# replicas; docs/jobs.md says how to turn them on (a volume, or OCRGATE_NATS_URL).
ENV OCRGATE_HOME=/opt/ocrgate \
    OCRGATE_JOBS=false \
    OCRGATE_ADDR=:8000 \
    OCRGATE_MODEL_DIR=/opt/ocrgate/models \
    OCRGATE_ORT_LIB=/opt/ocrgate/lib/libonnxruntime.so.1 \
    OCRGATE_LOG_FORMAT=json \
    OCRGATE_LOG_LEVEL=info
# The PDF engine (PDFium compiled to WebAssembly), compiled to native code once, here, into the
# cache the service reads when it starts: seconds of CPU saved at every start, and nothing written
# at run time (the root filesystem is read-only). On a CPU with other features than the build
# machine's the service compiles it again at start and goes on without writing.
RUN install -d -o 65532 -g 65532 -m 0700 /opt/ocrgate/cache
USER 65532:65532
RUN ["/usr/local/bin/ocrgate", "pdf-cache"]
WORKDIR /opt/ocrgate
EXPOSE 8000
# /healthz is liveness only (never depends on Triton); the runtime image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/ocrgate", "healthcheck"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/ocrgate"]
CMD ["serve"]

# ---- variants: only the default runtime differs --------------------------------------------------
FROM runtime AS runtime-cpu
ENV OCRGATE_RUNTIME=embedded

FROM runtime AS runtime-gpu
ENV OCRGATE_RUNTIME=triton \
    OCRGATE_TRITON_ADDR=localhost:8001

# The image that is built: runtime-cpu or runtime-gpu (an unknown VARIANT fails here).
FROM runtime-${VARIANT} AS final
