#!/usr/bin/env bash
# need.sh FILE PACKAGE...: makes sure FILE exists, installing the Debian
# PACKAGEs that provide it with apt-get when run as root (CI, a fresh
# machine); anyone else is told the exact command and the script fails.
set -euo pipefail
file=$1
shift
[ -e "$file" ] && exit 0
install="apt-get install -y --no-install-recommends $*"
if [ "$(id -u)" != 0 ]; then
	printf '%s is missing: run `sudo apt-get update && sudo %s`\n' "$file" "$install" >&2
	exit 1
fi
printf '%s is missing: installing %s with apt-get\n' "$file" "$*" >&2
apt-get update
DEBIAN_FRONTEND=noninteractive $install
if [ ! -e "$file" ]; then
	printf '%s is still missing after `%s`\n' "$file" "$install" >&2
	exit 1
fi
