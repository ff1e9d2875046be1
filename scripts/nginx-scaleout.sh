#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/nginx-scaleout.sh: nginx in front of N toolhost --http instances on
# free loopback ports, everything under one directory (no root, nothing in
# /etc), with the proxy settings of contrib/nginx/toolhost-proxy.conf and the
# routing of contrib/nginx/toolhost.conf (sessions pinned by their prefix).
#
#   nginx-scaleout.sh start DIR N [TOOLHOST-ARGS...]   start, then return
#   nginx-scaleout.sh stop DIR                         SIGTERM all, wait
#
# start writes DIR/scaleout.env (NGINX_URL, INSTANCE_PORTS, INSTANCE_PIDS,
# NGINX_PID) for `. DIR/scaleout.env`; instance K logs to DIR/iK.log, nginx
# to DIR/access.log ("upstream status session-id" a line). Environment:
# TOOLHOST (default: toolhost on PATH), NGINX (default: nginx, /usr/sbin/nginx).
# Instance K runs with TOOLHOST_INSTANCE=K in its environment, so a wrapper
# given as TOOLHOST can vary its arguments by instance.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proxy_conf="$here/../contrib/nginx/toolhost-proxy.conf"
TOOLHOST=${TOOLHOST:-toolhost}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}

die() { echo "nginx-scaleout.sh: $*" >&2; exit 1; }

# The port toolhost logged ("listening on http://127.0.0.1:PORT/..."), waiting up to 10 s.
port_of() {
    i=0
    while [ $i -lt 100 ]; do
        p=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$1" | head -1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        i=$((i + 1))
        sleep 0.1
    done
    return 1
}

start() {
    dir=$1 n=$2
    shift 2
    mkdir -p "$dir/tmp"
    dir=$(cd "$dir" && pwd)
    : >"$dir/scaleout.env"
    # A failed start leaves nothing running.
    trap 'stop "$dir"' EXIT
    ports="" pids="" k=1
    while [ $k -le "$n" ]; do
        # Every connection comes from nginx's address: all may.
        TOOLHOST_INSTANCE=$k "$TOOLHOST" --http 127.0.0.1:0 --http-session-prefix="i$k-" \
            --http-max-client-connections=64 "$@" </dev/null >"$dir/i$k.log" 2>&1 &
        pid=$!
        pids="$pids $pid"
        echo "INSTANCE_PIDS='${pids# }'" >>"$dir/scaleout.env" # so stop works even if start fails later
        port=$(port_of "$dir/i$k.log") || { cat "$dir/i$k.log" >&2; die "instance $k did not listen"; }
        ports="$ports $port"
        k=$((k + 1))
    done
    # The upstream group, the session map and the server: see
    # contrib/nginx/toolhost.conf for why sessions are routed by prefix.
    servers="" routes="" k=1
    for port in $ports; do
        servers="$servers        server 127.0.0.1:$port;
"
        routes="$routes        ~^i$k- 127.0.0.1:$port;
"
        k=$((k + 1))
    done
    # A free port for nginx: try some until one binds (nginx exits at once
    # when it cannot).
    try=0
    while :; do
        try=$((try + 1))
        [ $try -le 20 ] || die "nginx found no free port; see $dir/error.log"
        nport=$(( 20000 + ($$ * 31 + try * 977 + $(date +%N | sed 's/^0*//;s/^$/0/') ) % 40000 ))
        cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 256; }
http {
    log_format scaleout '\$upstream_addr \$status \$http_mcp_session_id';
    access_log $dir/access.log scaleout;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    upstream toolhost_any {
$servers        keepalive 8;
    }
    map \$http_mcp_session_id \$toolhost_backend {
        default toolhost_any;
$routes    }
    server {
        listen 127.0.0.1:$nport;
        location = /mcp {
            include $proxy_conf;
        }
        location /.well-known/oauth-protected-resource {
            include $proxy_conf;
        }
    }
}
CONF
        "$NGINX" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
        npid=$!
        i=0 up=""
        while [ $i -lt 50 ] && kill -0 $npid 2>/dev/null; do
            # Listening once the pid file is written and the port answers.
            if [ -s "$dir/nginx.pid" ] && curl -s -o /dev/null "http://127.0.0.1:$nport/nothing"; then
                up=1
                break
            fi
            i=$((i + 1))
            sleep 0.1
        done
        [ -n "$up" ] && break
        kill $npid 2>/dev/null || true
        wait $npid 2>/dev/null || true
        grep -q "Address already in use" "$dir/error.log" 2>/dev/null || die "nginx did not start: $(cat "$dir/error.log")"
    done
    cat >"$dir/scaleout.env" <<ENV
NGINX_URL='http://127.0.0.1:$nport/mcp'
INSTANCE_PORTS='${ports# }'
INSTANCE_PIDS='${pids# }'
NGINX_PID='$npid'
ENV
    trap - EXIT
}

stop() {
    dir=$1
    [ -f "$dir/scaleout.env" ] || return 0
    INSTANCE_PIDS="" NGINX_PID=""
    . "$dir/scaleout.env"
    for pid in $NGINX_PID $INSTANCE_PIDS; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in $NGINX_PID $INSTANCE_PIDS; do
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
            i=$((i + 1))
            sleep 0.1
        done
    done
}

case "${1:-}" in
start) [ $# -ge 3 ] || die "usage: start DIR N [TOOLHOST-ARGS...]"; shift; start "$@" ;;
stop) [ $# -eq 2 ] || die "usage: stop DIR"; stop "$2" ;;
*) die "usage: nginx-scaleout.sh start DIR N [TOOLHOST-ARGS...] | stop DIR" ;;
esac
