# syntax=docker/dockerfile:1
# The wds image: one static binary, every subcommand (serve, worker, migrate, admin). Build it with
#   docker build -t wds .
# and run a role with e.g. `docker run --env-file wds.env wds serve` (docs/production.md).

# ---- build: the Go toolchain, discarded after the binary is made ----
FROM golang:1.26-alpine AS build
WORKDIR /src
# Modules first, so editing code does not invalidate the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The version `wds version` prints, and so the build id of the image's workers (docs/production.md,
# Deploys and rollbacks): give each release its own, e.g. --build-arg WDS_VERSION=$(git describe --tags --always).
ARG WDS_VERSION=dev
# CGO_ENABLED=0: a static binary that needs no libc in the runtime image.
RUN CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -ldflags="-s -w -X main.version=${WDS_VERSION}" -o /out/wds ./cmd/wds

# ---- runtime: Alpine rather than distroless so compose healthchecks have wget, still ~10 MB ----
FROM alpine:3.22 AS runtime
# ca-certificates: outbound webhooks are HTTPS only; tzdata: RFC 3339 times in any zone.
RUN apk add --no-cache ca-certificates tzdata \
 && addgroup -S -g 10001 wds \
 && adduser -S -D -H -u 10001 -G wds wds
COPY --from=build /out/wds /usr/local/bin/wds
# Numeric so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
# 8080: the API (WDS_HTTP_ADDR); 9090: /metrics (WDS_METRICS_ADDR).
EXPOSE 8080 9090
ENTRYPOINT ["/usr/local/bin/wds"]
CMD ["serve"]
