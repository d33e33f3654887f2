#!/bin/sh
# Install the Debian packages the build, the tests and the demo need, if any is missing.
# Runs apt-get only when something is absent, so repeated `make test` stays quick.
set -eu
PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev clang-format clang-tidy cppcheck
 libnng-dev libelf-dev libdw-dev libcmocka-dev zlib1g-dev libcurl4-openssl-dev
 openjdk-17-jdk-headless linux-perf util-linux procps iproute2 perl python3
 golang-go chromium chromium-driver nodejs time bc strace
 libdebuginfod-dev debuginfod libc6-dbg podman runc mmdebstrap docker.io docker-compose
 libbpf-dev bpftool
 libjetty9-java libpostgresql-jdbc-java libmariadb-java postgresql mariadb-server apache2-utils"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run as root, or install them with: apt-get install$missing" >&2
	exit 1
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
