# tests/observe.mk: what an operator watches: the values behind /metrics
# (test_metrics), the span ring behind --otlp-endpoint (test_trace), the
# sd_notify messages a
# service manager gets (test_notify), and /metrics, /healthz and /readyz as
# promtool and a real Prometheus read them (observe/prometheus.sh, which
# needs prometheus: scripts/deps-debian.sh --test installs it).
check_PROGRAMS += test_metrics
TESTS += test_metrics
test_metrics_SOURCES = test_metrics.c
check_PROGRAMS += test_trace
TESTS += test_trace
test_trace_SOURCES = test_trace.c
check_PROGRAMS += test_notify
TESTS += test_notify
test_notify_SOURCES = test_notify.c
TESTS += observe/prometheus.sh
EXTRA_DIST += observe.mk observe/prometheus.sh
