# The optimize image: both commands, `optimize` and `worker`, static
# binaries on a base with no shell. Build it with `docker build -t
# optimize:latest .`; the Kubernetes Jobs in deploy/kubernetes/ name the
# command to run (the image has no ENTRYPOINT).
FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO_ENABLED=0: the SQLite driver is modernc.org/sqlite (pure Go) and
# PostgreSQL is pgx, so nothing needs libc and the binaries are static.
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags="-s -w" -o /out/optimize ./cmd/optimize && \
    go build -trimpath -ldflags="-s -w" -o /out/worker ./cmd/worker

# distroless static: CA certificates (for sslmode=verify-full DSNs), tzdata,
# a nonroot user (65532) and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/optimize /out/worker /usr/local/bin/
USER 65532:65532
WORKDIR /home/nonroot
CMD ["optimize", "--help"]
