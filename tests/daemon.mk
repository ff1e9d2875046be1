# tests/daemon.mk: one daemon for many clients: --http=unix:PATH, its
# peers' uids, --idle-exit, and `toolhost connect [--start]`
# (daemon/daemon.sh; it needs setpriv and curl, and runs as root to act
# as uid 65534).
TESTS += daemon/daemon.sh
EXTRA_DIST += daemon.mk daemon/daemon.sh
