# tests/http.mk: the Streamable HTTP transport (included by tests/Makefile.am):
# integration tests that drive the real src/toolhost with --http from a plain
# socket client. The conformance suite over HTTP is in interop.mk.
check_PROGRAMS += test_http
TESTS += test_http
test_http_SOURCES = test_http.c http_client.c http_client.h $(MCP_HARNESS) jwt_keys.c jwt_keys.h
test_http_CFLAGS = $(AM_CFLAGS) $(JWT_CFLAGS)
test_http_LDADD = $(LDADD) $(JWT_LIBS) $(CRYPTO_LIBS)

# Hostile HTTP clients on raw sockets: smuggling, bad Host and Origin,
# confused tokens, slow senders, one address taking every slot. Add an
# attack as a row of its cases table, or a test beside the slow senders.
check_PROGRAMS += test_http_hostile
TESTS += test_http_hostile
test_http_hostile_SOURCES = test_http_hostile.c http_client.c http_client.h $(MCP_HARNESS)

# JWT bearer tokens: th_auth with a JWKS, keys and tokens made per run.
check_PROGRAMS += test_jwt
TESTS += test_jwt
test_jwt_SOURCES = test_jwt.c jwt_keys.c jwt_keys.h
test_jwt_CFLAGS = $(AM_CFLAGS) $(JWT_CFLAGS)
test_jwt_LDADD = $(LDADD) $(JWT_LIBS) $(CRYPTO_LIBS)

# Socket activation (--http=systemd): a socket passed as systemd does.
check_PROGRAMS += test_activation
TESTS += test_activation
test_activation_SOURCES = test_activation.c

# An HTTP body is parsed once: th_http in process, JSON parsers wrapped.
check_PROGRAMS += test_http_parse
TESTS += test_http_parse
test_http_parse_SOURCES = test_http_parse.c http_client.c http_client.h $(MCP_HARNESS)
test_http_parse_LDFLAGS = -Wl,--wrap=json_tokener_parse -Wl,--wrap=json_tokener_parse_ex \
	-Wl,--wrap=th_fastjson_parse -Wl,--wrap=th_fastjson_fields
