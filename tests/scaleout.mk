# tests/scaleout.mk: nginx in front of three toolhost instances (one
# service over many machines), run when configure found nginx and curl.
if NGINX_TESTS
TESTS += scaleout/nginx.sh
endif
EXTRA_DIST += scaleout.mk scaleout/nginx.sh
