#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/install-layout.sh: a staged install (DESTDIR) puts the
# binary, bundled plugins, header, pkg-config file, man page, shell
# completions and systemd units where they belong, quietly; pkg-config
# reports them; uninstall leaves no file behind (so a packager's staged
# install is complete). Run by `make check` through tests/authors.mk.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_BUILDDIR:?}" "${MAKE:=make}" "${prefix:?}" "${libdir:?}" "${plugindir:?}" "${includedir:?}" "${bindir:?}" "${mandir:?}" "${datadir:?}"

stage=$(mktemp -d "${TMPDIR:-/tmp}/th-install.XXXXXX") || exit 1
log="$stage.log"
trap 'rm -rf "$stage" "$log"' EXIT

# Not the tests/ directory, which is being checked right now. src/ installs
# a real shared library (the test kit), for which libtool's --finish advice
# (ldconfig) does apply: its log is kept apart from the plugins'.
$MAKE -C "$TOP_BUILDDIR/src" install DESTDIR="$stage" >"$log.src" 2>&1 || { cat "$log.src"; fail "make install in src"; }
rm -f "$log.src"
$MAKE -C "$TOP_BUILDDIR/plugins" install DESTDIR="$stage" >>"$log" 2>&1 || { cat "$log"; fail "make install in plugins"; }
$MAKE -C "$TOP_BUILDDIR" install-data-am install-exec-am DESTDIR="$stage" >>"$log" 2>&1 || { cat "$log"; fail "make install"; }
if grep -n -e '--finish' -e 'Libraries have been installed' "$log"; then
    fail "make install printed libtool's --finish advice, which does not apply to plugins"
fi

for f in "$bindir/toolhost" "$plugindir/echo.so" "$plugindir/add.so" "$plugindir/text.so" \
         "$includedir/toolhost/plugin.h" "$libdir/pkgconfig/toolhost.pc" "$mandir/man1/toolhost.1" \
         "$includedir/toolhost/testing.h" "$libdir/pkgconfig/toolhost-testing.pc" "$libdir/libtoolhost-testing.a" \
         "$datadir/bash-completion/completions/toolhost" "$datadir/zsh/site-functions/_toolhost"; do
    [ -f "$stage$f" ] || fail "$f was not installed"
done
# The systemd units, with the configured paths, where configure found
# systemd's unit directory (none when configured without).
if [ -n "${systemdsystemunitdir:-}" ]; then
    for u in toolhost.service toolhost.socket toolhost@.service; do
        [ -f "$stage$systemdsystemunitdir/$u" ] || fail "$systemdsystemunitdir/$u was not installed"
    done
    grep -q "^ExecStart=$bindir/toolhost " "$stage$systemdsystemunitdir/toolhost.service" ||
        fail "the installed toolhost.service does not start $bindir/toolhost"
fi
# The shared daemon's user units likewise (systemduserunitdir).
if [ -n "${systemduserunitdir:-}" ]; then
    for u in toolhost-daemon.service toolhost-daemon.socket; do
        [ -f "$stage$systemduserunitdir/$u" ] || fail "$systemduserunitdir/$u was not installed"
    done
    grep -q "^ExecStart=$bindir/toolhost --http=systemd " "$stage$systemduserunitdir/toolhost-daemon.service" ||
        fail "the installed toolhost-daemon.service does not start $bindir/toolhost --http=systemd"
fi
extra=$(find "$stage$plugindir" -type f ! -name '*.so')
[ -z "$extra" ] || fail "the plugin directory holds more than plugins: $extra"

# pkg-config, as a plugin's Makefile asks it.
PKG_CONFIG_PATH="$stage$libdir/pkgconfig"
export PKG_CONFIG_PATH
if pkg-config --exists json-c 2>/dev/null; then
    got=$(pkg-config --variable=plugindir toolhost) || fail "pkg-config does not know toolhost"
    [ "$got" = "$plugindir" ] || fail "pkg-config plugindir is '$got', expected '$plugindir'"
    # pkg-config leaves out -I/usr/include (a system directory) unless told:
    # with prefix=/usr, as in the Debian package build, it would be missing.
    got=$(PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 pkg-config --cflags toolhost)
    case " $got " in *" -I$includedir "*) ;; *) fail "pkg-config --cflags is '$got', without -I$includedir" ;; esac
    got=$(pkg-config --variable=toolhost toolhost-testing) || fail "pkg-config does not know toolhost-testing"
    [ "$got" = "$bindir/toolhost" ] || fail "pkg-config toolhost-testing's toolhost is '$got', expected '$bindir/toolhost'"
    got=$(pkg-config --libs toolhost-testing)
    case " $got " in *" -ltoolhost-testing "*) ;; *) fail "pkg-config --libs toolhost-testing is '$got'" ;; esac
    got=$(pkg-config --modversion toolhost)
    [ -n "$got" ] || fail "pkg-config --modversion is empty"
fi

for d in src plugins; do
    $MAKE -C "$TOP_BUILDDIR/$d" uninstall DESTDIR="$stage" >>"$log" 2>&1 || { cat "$log"; fail "make uninstall in $d"; }
done
$MAKE -C "$TOP_BUILDDIR" uninstall-am DESTDIR="$stage" >>"$log" 2>&1 || { cat "$log"; fail "make uninstall"; }
left=$(find "$stage" ! -type d)
[ -z "$left" ] || fail "make uninstall left files behind: $left"
echo "PASS: install, pkg-config and uninstall layout"
