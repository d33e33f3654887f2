#!/bin/sh
# install-deps.sh [build|all] - the Debian packages fgcollect needs, checked and, as root,
# installed when missing.
#   build  what `make` and `make build` need: a C compiler, CMake, the libraries fgcollect and
#          libfgagent.so link, clang and bpftool for the off-CPU BPF program, a JDK (the JNI
#          headers, the Java test workloads) and cmocka (`make build` builds the unit tests);
#   all    (the default; `make test`, `make demo`) the same and what the tests and the demo
#          run: perf, the linters, podman and Docker, browsers, databases, debug files; and
#          speedscope from the npm registry (the time view's browser test opens its files in
#          it), in $NPM_DIR.
# Nothing missing: exits 0 at once, so a repeated `make` stays quick. Missing, not root: lists
# them with the apt-get line that installs them and exits 1. Missing, root: says so and runs
# apt-get.
set -eu
BUILD_PKGS="build-essential cmake pkg-config clang libbpf-dev bpftool
 libnng-dev libmbedtls-dev libelf-dev libdw-dev libdebuginfod-dev libcurl4-openssl-dev zlib1g-dev
 openjdk-17-jdk-headless libcmocka-dev"
TEST_PKGS="ccache libclang-rt-14-dev clang-format clang-tidy cppcheck
 linux-perf util-linux procps iproute2 perl python3
 golang-go chromium chromium-driver nodejs python3-jsonschema time bc strace
 debuginfod libc6-dbg podman runc mmdebstrap docker.io docker-compose
 libjetty9-java libpostgresql-jdbc-java libmariadb-java postgresql mariadb-server apache2-utils"
# npm packages of the tests, outside the source tree.
NPM_DIR=/var/cache/fgcollect-test/npm
NPM_PKGS="speedscope@1.25.0"
npm_deps() {
	[ "$PKGS" != "$BUILD_PKGS" ] || return 0
	[ -f "$NPM_DIR/node_modules/speedscope/package.json" ] && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v npm >/dev/null; then
		echo "install-deps: the tests need $NPM_PKGS from the npm registry; as root:" >&2
		echo "install-deps:   npm install --prefix $NPM_DIR $NPM_PKGS" >&2
		return 1
	fi
	echo "install-deps: installing $NPM_PKGS into $NPM_DIR (npm)" >&2
	mkdir -p "$NPM_DIR"
	# shellcheck disable=SC2086
	npm install --prefix "$NPM_DIR" --no-audit --no-fund --ignore-scripts $NPM_PKGS >/dev/null
}
case ${1:-all} in
build) PKGS=$BUILD_PKGS what="the build needs" ;;
all) PKGS="$BUILD_PKGS $TEST_PKGS" what="the build, the tests and the demo need" ;;
*)
	echo "usage: install-deps.sh [build|all]" >&2
	exit 64
	;;
esac
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	npm_deps
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: $what Debian packages that are not installed:$missing" >&2
	echo "install-deps: install them as root with: apt-get install$missing" >&2
	exit 1
fi
echo "install-deps: installing what $what (as root, with apt-get):$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
npm_deps
