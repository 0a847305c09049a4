#!/usr/bin/env bash
# Builds the clinic server's OCI image with Debian's podman (`make image`):
# a static binary, Debian's CA bundle and a passwd/group naming the
# non-root user, copied onto an empty base by internal/deploy/Containerfile.
# Writes the image into podman's store as $IMAGE and as an OCI archive at
# $ARCHIVE. Installs podman and the CA bundle with apt-get when run as root;
# anyone else is told the command.
set -euo pipefail

IMAGE=${IMAGE:-localhost/clinic:latest}
ARCHIVE=${ARCHIVE:-bin/clinic-image.oci.tar}
GO=${GO:-go}
CONTEXT=bin/image-context
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

log() { printf 'image: %s\n' "$*" >&2; }

internal/deploy/need.sh /usr/bin/podman podman
internal/deploy/need.sh "$CA_BUNDLE" ca-certificates

start=$(date +%s.%N)
version=$(git describe --always --dirty --tags 2>/dev/null || echo dev)
source_url=https://$($GO list -m)

rm -rf "$CONTEXT"
mkdir -p "$CONTEXT" "$(dirname "$ARCHIVE")"
# CGO_ENABLED=0: no C library to find at run time, so the binary runs on an
# empty base. Time zones come from time/tzdata (imported by cmd/clinic);
# migrations and static files are embedded. -trimpath keeps the build
# machine's paths out of the binary.
CGO_ENABLED=0 $GO build -trimpath -ldflags='-s -w' -o "$CONTEXT/clinic" ./cmd/clinic
cp internal/deploy/Containerfile internal/deploy/passwd internal/deploy/group "$CONTEXT/"
cp "$CA_BUNDLE" "$CONTEXT/ca-certificates.crt"
# /var/lib root's, as on any system; /var/lib/clinic the server's own.
mkdir -p -m 0755 "$CONTEXT/var/lib"
mkdir -m 0700 "$CONTEXT/state"

# --isolation chroot: nothing in the build runs a container (COPY only),
# and this machine could not start one (no cgroup delegation).
# --layers=false: no cached image per step left in the store.
# --timestamp: the commit's time, so that one commit builds one image.
podman build --isolation chroot --layers=false \
	--timestamp "$(git log -1 --format=%ct 2>/dev/null || echo 0)" \
	--build-arg VERSION="$version" --build-arg SOURCE="$source_url" \
	-f "$CONTEXT/Containerfile" -t "$IMAGE" "$CONTEXT"

rm -f "$ARCHIVE"
podman save --format oci-archive -o "$ARCHIVE" "$IMAGE"
# A rebuild leaves the previous image untagged: drop it, and the context.
podman image prune -f >/dev/null
rm -rf "$CONTEXT"

end=$(date +%s.%N)
size=$(podman image inspect "$IMAGE" --format '{{.Size}}')
log "$IMAGE ($version): $((size / 1000)) kB unpacked; $ARCHIVE $(($(stat -c %s "$ARCHIVE") / 1000)) kB; built in $(awk "BEGIN{printf \"%.1f\", $end - $start}") s"
