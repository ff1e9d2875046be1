#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/deps-debian.sh: install what toolhost needs to build (and, with
# --test, to run every test; with --fuzz, for `make fuzz`; with --bench, for
# `make bench`; with --package, for `dpkg-buildpackage`) on Debian 12 or
# later, as root. Options combine. Safe to re-run.
set -eu
pkgs="build-essential autoconf automake libtool pkg-config libjson-c-dev libffi-dev libpcre2-dev libmicrohttpd-dev libssl-dev libjwt-dev libseccomp-dev check"
want() { case " $* " in *" $flag "*) return 0 ;; esac; return 1; }
flag=--package
if want "$@" || { flag=--test; want "$@"; }; then
    # debhelper (with dh-autoreconf) builds the packages in debian/ (no
    # fakeroot: Rules-Requires-Root: no). Its perl tool chain is heavy, so
    # only for packaging, and for --test, whose make check builds them
    # (tests/packaging/deb.sh).
    # jq reads the binary's .note.dlopen (debian/dlopen-deps).
    pkgs="$pkgs debhelper dpkg-dev jq"
fi
flag=--test
if want "$@"; then
    # nodejs/npm drive the official SDK clients (tests/interop); valgrind
    # checks the host for leaks; locales has localedef and the de_DE source
    # the locale test compiles.
    # nginx-light and curl run the scale-out test (tests/scaleout);
    # prometheus (with promtool) scrapes /metrics (tests/observe);
    # systemd has systemd-analyze, which verifies the installed units
    # (tests/authors/systemd-units.sh); podman, with runc where crun cannot
    # run, and mmdebstrap build and run the OCI image (tests/container).
    pkgs="$pkgs valgrind locales nginx-light curl prometheus systemd podman runc mmdebstrap"
    command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
fi
flag=--fuzz
if want "$@"; then
    # `make fuzz`: clang and its libFuzzer/sanitizer runtimes (Debian 12
    # names; the runtime is only a recommendation of clang).
    pkgs="$pkgs clang libclang-rt-14-dev"
fi
flag=--bench
if want "$@"; then
    # `make bench`: node/npm run the TypeScript SDK server (bench/chart.sh
    # draws the chart with sh and awk); `make bench-http` drives nginx's
    # floor and toolhost with h2load (nghttp2-client), a load generator we
    # did not write (wrk is the other one).
    pkgs="$pkgs nghttp2-client wrk nginx-light curl"
    command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
fi
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "deps-debian.sh: missing packages:$missing (run as root, or apt-get install them)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing
fi
