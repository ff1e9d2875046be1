#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/mcpb.sh: stages and packs the MCP Bundle (`make mcpb`, and
# tests/mcpb/bundle.sh): the toolhost linked with an $ORIGIN rpath, the
# launcher, the bundled plugins and every shared library they need that is
# not glibc, then validates the manifest and packs it with the MCPB CLI.
#
# usage: scripts/mcpb.sh OUTDIR
# from the environment (the Makefile sets them): TH_MCPB_BIN (the relinked
# binary), TH_MCPB_PLUGINS (NAME.so files), TH_MCPB_DLOPEN (the sonames the
# host opens with dlopen), TH_MCPB_VERSION, TH_MCPB_ARCH, TH_MCPB_SRCDIR
# (the source tree), TH_MCPB_CLI (the CLI's cli.js) and NODE.
set -eu
PATH=$PATH:/sbin:/usr/sbin # ldconfig

out=${1:?usage: scripts/mcpb.sh OUTDIR}
src=$TH_MCPB_SRCDIR
name=toolhost-$TH_MCPB_VERSION-linux-$TH_MCPB_ARCH
stage=$out/$name
bundle=$out/$name.mcpb

die() {
    echo "scripts/mcpb.sh: $*" >&2
    exit 1
}

# glibc's own libraries are the system's: the bundle relies on the glibc
# it finds, no older than the newest symbol version it uses (below).
is_glibc() {
    case ${1##*/} in
    ld-linux*.so.* | linux-vdso.so.* | libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | \
        librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | libmvec.so.* | libnss_*.so.* | \
        libthread_db.so.* | libBrokenLocale.so.*)
        return 0 ;;
    esac
    return 1
}

# The shared libraries FILE loads, as "SONAME PATH" lines, from ldd; a
# dependency ldd cannot find is an error here, not a broken bundle later.
needed() {
    ldd "$1" | awk -v f="$1" '
        $2 == "=>" && $3 == "not" { print "missing " $1 " (needed by " f ")"; next }
        $2 == "=>" && $3 ~ /^\// { print $1, $3 }'
}

# Where the dynamic linker would find SONAME, for the libraries the host
# opens by name with dlopen(), which ldd does not see.
soname_path() {
    ldconfig -p | awk -v s="$1" '$1 == s { print $NF; exit }'
}

add_lib() { # SONAME PATH
    is_glibc "$1" && return 0
    [ -e "$stage/lib/$1" ] && return 0
    cp -L "$2" "$stage/lib/$1"
    chmod 644 "$stage/lib/$1"
    echo "$2" >>"$out/.mcpb-libs"
}

add_deps_of() { # FILE
    needed "$1" >"$out/.mcpb-needed"
    while read -r so path; do
        [ "$so" = missing ] && die "$path: $so"
        add_lib "$so" "$path"
    done <"$out/.mcpb-needed"
}

rm -rf "$stage" "$bundle"
mkdir -p "$stage/bin" "$stage/lib" "$stage/plugins" "$stage/licenses"
: >"$out/.mcpb-libs"

cp "$TH_MCPB_BIN" "$stage/bin/toolhost"
cp "$src/mcpb/launch.sh" "$stage/bin/launch"
chmod 755 "$stage/bin/toolhost" "$stage/bin/launch"
for p in $TH_MCPB_PLUGINS; do
    cp "$p" "$stage/plugins/"
    chmod 755 "$stage/plugins/${p##*/}"
done

# Debugging information is half the binary's size and no user's need.
"${STRIP:-strip}" --strip-debug "$stage/bin/toolhost" "$stage"/plugins/*.so

add_deps_of "$stage/bin/toolhost"
for p in "$stage"/plugins/*.so; do
    add_deps_of "$p"
done
for so in $TH_MCPB_DLOPEN; do
    path=$(soname_path "$so")
    [ -n "$path" ] || die "$so (opened with dlopen) is not installed"
    add_lib "$so" "$path"
    add_deps_of "$path"
done
# A bundled library's own dependencies, until nothing new comes in.
count=0
while [ "$count" -ne "$(ls "$stage/lib" | wc -l)" ]; do
    count=$(ls "$stage/lib" | wc -l)
    for l in "$stage"/lib/*; do
        add_deps_of "$l"
    done
done

# Each bundled library's licence, where dpkg knows its package.
cp "$src/LICENSE" "$stage/licenses/toolhost"
if command -v dpkg >/dev/null 2>&1; then
    sort -u "$out/.mcpb-libs" | while read -r path; do
        pkg=$(dpkg -S "$path" 2>/dev/null | sed -n '1s/:.*//p') || true
        [ -z "$pkg" ] && pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | sed -n '1s/:.*//p') || true
        [ -n "$pkg" ] && [ -f "/usr/share/doc/$pkg/copyright" ] &&
            cp "/usr/share/doc/$pkg/copyright" "$stage/licenses/$pkg"
        true
    done
fi
rm -f "$out/.mcpb-libs" "$out/.mcpb-needed"

# The glibc floor: the newest GLIBC_x.y symbol version any file asks for.
glibc=$(for f in "$stage"/bin/toolhost "$stage"/plugins/*.so "$stage"/lib/*; do
    objdump -T "$f"
done | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
[ -n "$glibc" ] || die "no GLIBC symbol version found (objdump -T)"

sed -e "s|@VERSION@|$TH_MCPB_VERSION|g" -e "s|@ARCH@|$TH_MCPB_ARCH|g" -e "s|@GLIBC@|$glibc|g" \
    "$src/mcpb/manifest.json.in" >"$stage/manifest.json"

"$NODE" "$TH_MCPB_CLI" validate "$stage/manifest.json"
"$NODE" "$TH_MCPB_CLI" pack "$stage" "$bundle"
echo "scripts/mcpb.sh: $bundle (glibc $glibc or newer, $(ls "$stage/lib" | wc -l) libraries)"
