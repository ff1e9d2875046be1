#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/packaging/deb.sh: the Debian packages (debian/) build from a clean
# copy of the checkout, hold what they should, and work unpacked: the
# packaged toolhost serves calls with its packaged plugins, and a plugin
# scaffolded by it builds against toolhost-dev's pkg-config module and is
# served too. Run by `make check` when configure found dpkg-buildpackage,
# dh and a git checkout (tests/packaging.mk); everything it writes is in a
# temporary directory, never in the source tree.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"

work=$(mktemp -d "${TMPDIR:-/tmp}/th-deb.XXXXXX") || exit 1
[ -n "${TH_KEEP_WORK:-}" ] || trap 'rm -rf "$work"' EXIT

# The checkout's files as git sees them (tracked, and new files not ignored):
# no build products of the tree under test, and dpkg-buildpackage writes
# its ../*.deb into $work, not next to the source tree.
src="$work/toolhost"
mkdir "$src"
(cd "$TOP_SRCDIR" && git ls-files -co --exclude-standard -z) > "$work/files" || fail "git ls-files in $TOP_SRCDIR"
(cd "$TOP_SRCDIR" && xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh < "$work/files" |
    tar --null -cf - -T -) | (cd "$src" && tar -xf -) || fail "copying the checkout"
rm -rf "$src/tests/interop/node_modules"

# The enclosing `make check` runs the test suite on these same sources, so
# the package build skips it, as a distribution's nocheck build does: the
# nocheck profile drops Check and libjwt from Build-Depends, and this
# pkg-config answers as on a machine without them (the system's .pc files
# cannot be hidden otherwise), so the build shows it needs neither.
mkdir "$work/bin"
cat > "$work/bin/pkg-config-nocheck" <<'WRAP'
#!/bin/sh
for a; do case $a in check|"check "*|libjwt|"libjwt "*) echo "Package $a was not found (pkg-config-nocheck)" >&2; exit 1 ;; esac; done
exec pkg-config "$@"
WRAP
chmod +x "$work/bin/pkg-config-nocheck"
nocheck_pc="$work/bin/pkg-config-nocheck"
(cd "$src" && PKG_CONFIG="$nocheck_pc" DEB_BUILD_PROFILES=nocheck DEB_BUILD_OPTIONS="nocheck parallel=2" \
    dpkg-buildpackage -b -us -uc) > "$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log"; fail "dpkg-buildpackage -b -us -uc with the nocheck profile, without Check and libjwt"; }
grep -q "^PKG_CONFIG='$nocheck_pc'" "$src/config.log" || fail "the package build's configure did not use $nocheck_pc"
grep -q -- '--disable-tests' "$work/build.log" || fail "debian/rules did not configure with --disable-tests under nocheck"
# That tree has no tests to run, and says so (a make of its own: the
# enclosing make check's MAKEFLAGS carry its TEST_LOGS).
(cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make check) > "$work/check.log" 2>&1 &&
    fail "make check succeeded in a tree configured with --disable-tests"
grep -q 'the tests were not built: configure ran with --disable-tests' "$work/check.log" ||
    { tail -n 20 "$work/check.log"; fail "make check in the nocheck tree does not say why it fails"; }
# Without the switch the same configure stops, naming what is missing and
# the way out; test binaries need them (DEB_BUILD_OPTIONS without nocheck).
(cd "$src" && PKG_CONFIG="$nocheck_pc" ./configure -q --disable-interop-tests --disable-package-tests) \
    > "$work/configure.log" 2>&1 && fail "configure without --disable-tests succeeded without Check and libjwt"
grep -q 'was not found by pkg-config.*--disable-tests' "$work/configure.log" ||
    { cat "$work/configure.log"; fail "configure's message without Check and libjwt does not name --disable-tests"; }
version=$(cd "$src" && dpkg-parsechangelog -S Version)
upstream=$(sed -n 's/^AC_INIT(\[toolhost\], \[\([^]]*\)\].*/\1/p' "$TOP_SRCDIR/configure.ac")
[ "$version" = "$upstream" ] || fail "debian/changelog is at $version, configure.ac at $upstream"
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugindir="/usr/lib/$ma/toolhost/plugins"
deb="$work/toolhost_${version}_$arch.deb"
dev="$work/toolhost-dev_${version}_$arch.deb"
[ -f "$deb" ] && [ -f "$dev" ] || { ls "$work"; fail "toolhost and toolhost-dev .deb files were not written"; }

# File lists: each package has its files, and no libtool archive anywhere;
# everything is root's although no step ran as root (Rules-Requires-Root: no).
for p in "$deb" "$dev"; do
    notroot=$(dpkg -c "$p" | awk '$2 != "root/root"')
    [ -z "$notroot" ] || fail "$(basename "$p") has files not owned by root: $notroot"
done
dpkg -c "$deb" | awk '{ print $6 }' > "$work/deb.list"
dpkg -c "$dev" | awk '{ print $6 }' > "$work/dev.list"
for f in /usr/bin/toolhost "$plugindir/echo.so" "$plugindir/add.so" "$plugindir/text.so" \
         /usr/share/man/man1/toolhost.1.gz /usr/share/doc/toolhost/copyright \
         /usr/lib/systemd/system/toolhost.service /usr/lib/systemd/system/toolhost.socket \
         /usr/lib/systemd/system/toolhost@.service /usr/share/bash-completion/completions/toolhost \
         /usr/lib/systemd/user/toolhost-daemon.service /usr/lib/systemd/user/toolhost-daemon.socket \
         /usr/share/zsh/vendor-completions/_toolhost; do
    grep -qxF ".$f" "$work/deb.list" || { cat "$work/deb.list"; fail "toolhost lacks $f"; }
done
! grep -n /usr/local "$work/deb.list" || fail "toolhost installs into /usr/local"
for f in /usr/include/toolhost/plugin.h "/usr/lib/$ma/pkgconfig/toolhost.pc" \
         /usr/share/man/man3/toolhost-plugin.3.gz; do
    grep -qxF ".$f" "$work/dev.list" || { cat "$work/dev.list"; fail "toolhost-dev lacks $f"; }
done
! grep -n '\.la$\|/include/\|pkgconfig' "$work/deb.list" || fail "toolhost holds development files"
! grep -n '\.la$\|/bin/\|\.so$' "$work/dev.list" || fail "toolhost-dev holds runtime files"
dpkg-deb -f "$deb" Depends | grep -q 'libjson-c' || fail "toolhost does not depend on json-c: $(dpkg-deb -f "$deb" Depends)"
# The dlopen()ed libraries (debian/dlopen-deps, from the binary's
# .note.dlopen): each soname's package as this system names it, libcrypto's
# required, libmicrohttpd's (--http only) recommended.
pkg_of() { dpkg-query -S "/usr/lib/$ma/$1" "/lib/$ma/$1" 2>/dev/null | sed -n 's/^\([^:,]*\):.*/\1/p' | sed -n 1p; }
soname() { sed -n "s/^#define $1 \"\(.*\)\"$/\1/p" "$TOP_BUILDDIR/config.h"; }
crypto_so=$(soname TH_CRYPTO_SONAME) mhd_so=$(soname TH_MHD_SONAME)
crypto_pkg=$(pkg_of "$crypto_so") mhd_pkg=$(pkg_of "$mhd_so")
[ -n "$crypto_pkg" ] && [ -n "$mhd_pkg" ] || fail "no installed package holds '$crypto_so' or '$mhd_so' (config.h)"
dpkg-deb -f "$deb" Depends | grep -q "\b$crypto_pkg (>= " ||
    fail "toolhost's Depends lack $crypto_pkg (>= ...): $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Recommends | grep -q "\b$mhd_pkg (>= " ||
    fail "toolhost's Recommends lack $mhd_pkg (>= ...): $(dpkg-deb -f "$deb" Recommends)"
! dpkg-deb -f "$deb" Depends | grep -q "$mhd_pkg" || fail "toolhost depends on $mhd_pkg, which only --http needs"

# Unpacked into a scratch root (as dpkg would install them, without the
# maintainer scripts, which only register the units with systemd).
root="$work/root"
dpkg -x "$deb" "$root" && dpkg -x "$dev" "$root" || fail "dpkg -x"
th="$root/usr/bin/toolhost"
# The packaged units start the packaged binary on the packaged plugins.
for u in toolhost.service toolhost@.service; do
    f="$root/usr/lib/systemd/system/$u"
    grep -q "^ExecStart=/usr/bin/toolhost " "$f" && grep -q -- "--plugin-dir=$plugindir " "$f" ||
        fail "the packaged $u does not run /usr/bin/toolhost on $plugindir"
done
! grep -n /usr/local "$root"/usr/lib/systemd/system/toolhost* || fail "a packaged unit names /usr/local"
"$th" --help 2>&1 | grep -q "default $plugindir" || fail "the packaged toolhost does not look for plugins in $plugindir"

# An author's plugin: scaffolded by the packaged binary, built and installed
# by its Makefile through toolhost-dev's pkg-config module, relocated into
# the scratch root (prefix=/usr becomes $root/usr).
PKG_CONFIG_PATH="$root/usr/lib/$ma/pkgconfig"
export PKG_CONFIG_PATH
pc="pkg-config --define-variable=prefix=$root/usr"
[ "$($pc --variable=plugindir toolhost)" = "$root$plugindir" ] ||
    fail "toolhost.pc's plugindir is $($pc --variable=plugindir toolhost), not the packaged $plugindir"
mkdir "$work/author"
"$th" new-plugin --dir "$work/author" greet > "$work/author.log" 2>&1 || { cat "$work/author.log"; fail "toolhost new-plugin"; }
make -C "$work/author" PKG_CONFIG="$pc" install > "$work/author.log" 2>&1 ||
    { cat "$work/author.log"; fail "building the scaffolded plugin against toolhost-dev"; }
grep -q -- "-I$root/usr/include" "$work/author.log" || { cat "$work/author.log"; fail "the plugin was not built with toolhost-dev's -I"; }
[ -f "$root$plugindir/greet.so" ] || fail "make install did not put greet.so into the packaged plugin directory"

# Serve: the bundled echo and the author's greet, in both isolation modes
# (add, echo, text and greet give tools; files serves only resources,
# prompts only prompts, skills only its setup skill).
for mode in process none; do
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"deb.sh","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"from the package"}}}' \
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"text":"world"}}}' |
        "$th" --plugin-dir "$root$plugindir" --no-registry-cache --isolation "$mode" --strict \
        > "$work/out" 2> "$work/err" || { cat "$work/err"; fail "the packaged toolhost ($mode) exited with $?"; }
    grep '"id":2' "$work/out" | grep -q '"text":"from the package"' ||
        { cat "$work/out" "$work/err"; fail "echo from the packaged plugin ($mode)"; }
    grep '"id":3' "$work/out" | grep -q '"text":"greet: world"' ||
        { cat "$work/out" "$work/err"; fail "greet, built against toolhost-dev ($mode)"; }
    grep -q 'loaded 4 tools from 7 plugins' "$work/err" || { cat "$work/err"; fail "summary line ($mode)"; }
done
echo "PASS: toolhost and toolhost-dev $version build, list, unpack and serve (process and none)"
