#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/authors/systemd-units.sh: the systemd units `make install` installs
# (contrib/systemd/*.in with the configured paths) pass `systemd-analyze
# verify` without a word, keep the restart and hardening rules, and leave
# the workers' sandbox its namespaces. systemd-analyze (Debian: systemd,
# which scripts/deps-debian.sh --test installs) is required in CI.
set -u
fail() { echo "FAIL: $*"; exit 1; }
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}" "${TOOLHOST:?}" "${PLUGINS:?}" "${bindir:?}"

units="toolhost.service toolhost.socket toolhost@.service"
user_units="toolhost-daemon.service toolhost-daemon.socket"
for u in $units $user_units; do
    f="$TOP_BUILDDIR/contrib/systemd/$u"
    [ -f "$f" ] || fail "$f was not built"
    left=$(grep -n '@[a-z_]*@' "$f") && fail "$u keeps a placeholder: $left"
done
# The shared daemon (user units): systemd passes it the Unix socket where
# `toolhost connect` looks, and it ends itself when idle.
d="$TOP_BUILDDIR/contrib/systemd/toolhost-daemon"
grep -q '^ListenStream=%t/toolhost.sock$' "$d.socket" || fail "toolhost-daemon.socket does not listen on %t/toolhost.sock"
grep -q '^SocketMode=0600$' "$d.socket" || fail "toolhost-daemon.socket is not the user's alone (SocketMode=0600)"
for want in "ExecStart=$bindir/toolhost --http=systemd " "RestartPreventExitStatus=2" "NoNewPrivileges=yes" \
            "    --idle-exit=" "Requires=toolhost-daemon.socket"; do
    grep -q "^$want" "$d.service" || fail "toolhost-daemon.service has no line starting '$want'"
done
for u in $units; do
    f="$TOP_BUILDDIR/contrib/systemd/$u"
    for want in "ExecStart=$bindir/toolhost " "RestartPreventExitStatus=2" "NoNewPrivileges=yes" \
                "ProtectSystem=strict" "ProtectHome=yes" "PrivateTmp=yes"; do
        case $u in *.socket) break ;; esac
        grep -q "^$want" "$f" || fail "$u has no line starting '$want'"
    done
    # The workers' sandbox unshares user and network namespaces itself.
    bad=$(grep -n -e '^RestrictNamespaces=' -e '^SystemCallFilter=' -e '^PrivateUsers=' "$f") &&
        fail "$u would stop the workers' sandbox: $bad"
done

if ! command -v systemd-analyze >/dev/null 2>&1; then
    if [ -n "${CI:-}" ]; then
        fail "systemd-analyze was not found; CI must verify the units (scripts/deps-debian.sh --test installs systemd)"
    fi
    echo "SKIP: systemd-analyze was not found (Debian: apt-get install systemd); units not verified"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/th-units.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# verify wants ExecStart's binary executable and Documentation's man page
# found: the built binary stands in for the installed one, the source's
# page for the installed page.
mkdir -p "$tmp/units" "$tmp/man/man1"
ln -s "$TOP_SRCDIR/doc/toolhost.1" "$tmp/man/man1/toolhost.1"
for u in $units $user_units; do
    sed "s|$bindir/toolhost |$TOOLHOST |" "$TOP_BUILDDIR/contrib/systemd/$u" >"$tmp/units/$u"
done

verify() {
    (cd "$1" && MANPATH="$tmp/man" SYSTEMD_LOG_COLOR=0 systemd-analyze verify \
        ./toolhost.service ./toolhost.socket ./toolhost@1.service) >"$tmp/out" 2>&1
    rc=$?
}
verify "$tmp/units"
[ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] || { cat "$tmp/out"; fail "systemd-analyze verify (status $rc)"; }
# The user units as the user manager reads them (%t is the runtime dir).
(cd "$tmp/units" && MANPATH="$tmp/man" SYSTEMD_LOG_COLOR=0 XDG_RUNTIME_DIR="$tmp" systemd-analyze --user verify \
    ./toolhost-daemon.service ./toolhost-daemon.socket) >"$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] || { cat "$tmp/out"; fail "systemd-analyze --user verify (status $rc)"; }

# The daemon's ExecStart as the user manager runs it: systemd-socket-activate
# holds the Unix socket and passes it (LISTEN_FDS), and a call through
# `toolhost connect` comes back (the built plugins and a scratch cache
# stand in for the installed ones).
if command -v systemd-socket-activate >/dev/null 2>&1; then
    mkdir -m 700 "$tmp/run" "$tmp/cache"
    sed -n '/^ExecStart=/,/[^\\]$/p' "$tmp/units/toolhost-daemon.service" | sed 's/^ExecStart=//; s/\\$//' |
        tr '\n' ' ' | sed "s|--plugin-dir=[^ ]*|--plugin-dir=$PLUGINS|; s|\${CACHE_DIRECTORY}|$tmp/cache|" > "$tmp/exec"
    # shellcheck disable=SC2046
    systemd-socket-activate -l "$tmp/run/toolhost.sock" $(cat "$tmp/exec") > "$tmp/daemon.log" 2>&1 &
    daemon=$!
    n=0
    while [ ! -S "$tmp/run/toolhost.sock" ] && [ $n -lt 100 ] && kill -0 "$daemon" 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
    printf '%s\n' \
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"units","version":"1"}}}' \
        '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"socket-activated"}}}' |
        "$TOOLHOST" connect "unix:$tmp/run/toolhost.sock" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    kill "$daemon" 2>/dev/null
    wait "$daemon"
    [ "$rc" -eq 0 ] && grep '"id":2' "$tmp/out" | grep -q '"text":"socket-activated"' ||
        { cat "$tmp/exec" "$tmp/out" "$tmp/err" "$tmp/daemon.log"; fail "toolhost-daemon.service's ExecStart did not serve a call on the passed socket"; }
    grep -q 'listening on the socket passed by the service manager' "$tmp/daemon.log" ||
        { cat "$tmp/daemon.log"; fail "the daemon did not serve the passed socket"; }
elif [ -n "${CI:-}" ]; then
    fail "systemd-socket-activate was not found (Debian: systemd)"
fi

# A unit systemd would misread must be caught, or the check above proves
# nothing here: a boolean it cannot parse.
mkdir "$tmp/broken"
cp "$tmp/units/"* "$tmp/broken/"
sed -i 's/^NoNewPrivileges=yes/NoNewPrivileges=perhaps/' "$tmp/broken/toolhost.service"
verify "$tmp/broken"
grep -q 'NoNewPrivileges\|boolean' "$tmp/out" || { cat "$tmp/out"; fail "verify did not complain of a broken unit"; }
echo "PASS: the systemd units, system and user, verify ($(systemd-analyze --version | sed -n 1p))"
