#!/bin/sh
# go test -exec wrapper used by make test: runs the test binary as go test
# would, after copying it into $KEEP_TEST_BINARIES when it is the test of
# one of the package folders listed in $KEEP_TEST_PACKAGES (relative to
# the repository, e.g. "web internal/faults"). make test's short Redis
# Cluster run then runs those same binaries again, with the cluster's
# URLs, instead of compiling and linking them a second time. The copy is
# renamed into place, so a binary found there is whole (the short run
# starts as soon as both are there, while the other tests still run).
# go test runs the binary in its package's folder.
set -e
here=$(pwd)
for pkg in $KEEP_TEST_PACKAGES; do
	case "$here" in
	*/"$pkg")
		mkdir -p "$KEEP_TEST_BINARIES"
		kept="$KEEP_TEST_BINARIES/$(echo "$pkg" | tr / _).test"
		cp "$1" "$kept.partial.$$"
		mv "$kept.partial.$$" "$kept"
		;;
	esac
done
exec "$@"
