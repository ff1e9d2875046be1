/* SPDX-License-Identifier: MIT */
/*
** base/crypto.h: the OpenSSL libcrypto functions the host calls (bearer
** tokens, JWT signatures, requestState MACs), resolved with dlopen() the
** first time one is called instead of by the dynamic linker at every start.
*/
#ifndef TH_CRYPTO_H
#define TH_CRYPTO_H

/* Every OpenSSL header the host uses, before the #defines below turn the
 * function names into calls through the table: include no OpenSSL header
 * after this one, or its prototypes would be rewritten too. */
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>

#include <stdbool.h>
#include <stddef.h>

/* X(name) for every function called; add one here and below when a new
 * call fails to link (the binary does not link libcrypto). */
#define TH_CRYPTO_FUNCS(X) \
    X(BN_bin2bn) \
    X(BN_free) \
    X(CRYPTO_free) \
    X(CRYPTO_memcmp) \
    X(ECDSA_SIG_free) \
    X(ECDSA_SIG_new) \
    X(ECDSA_SIG_set0) \
    X(EVP_DecodeBlock) \
    X(EVP_DigestVerify) \
    X(EVP_DigestVerifyInit_ex) \
    X(EVP_EncodeBlock) \
    X(EVP_MD_CTX_free) \
    X(EVP_MD_CTX_new) \
    X(EVP_PKEY_CTX_free) \
    X(EVP_PKEY_CTX_new_from_name) \
    X(EVP_PKEY_CTX_new_from_pkey) \
    X(EVP_PKEY_free) \
    X(EVP_PKEY_fromdata) \
    X(EVP_PKEY_fromdata_init) \
    X(EVP_PKEY_public_check) \
    X(EVP_sha256) \
    X(HMAC) \
    X(OPENSSL_cleanse) \
    X(OSSL_PARAM_BLD_free) \
    X(OSSL_PARAM_BLD_new) \
    X(OSSL_PARAM_BLD_push_BN) \
    X(OSSL_PARAM_BLD_push_octet_string) \
    X(OSSL_PARAM_BLD_push_utf8_string) \
    X(OSSL_PARAM_BLD_to_param) \
    X(OSSL_PARAM_free) \
    X(SHA256) \
    X(i2d_ECDSA_SIG) \
    X(OPENSSL_init_crypto) \
    X(OPENSSL_thread_stop)

/* Each function's place in the table. */
enum {
#define TH_CRYPTO_INDEX(f) th_crypto_i_##f,
    TH_CRYPTO_FUNCS(TH_CRYPTO_INDEX)
#undef TH_CRYPTO_INDEX
    th_crypto_count
};

/* The table of addresses, libcrypto opened (and OPENSSL_init_crypto() run)
 * on the first call; a libcrypto that cannot be opened aborts
 * (base/dynlib.h). TH_CRYPTO_FN gives an entry the type of its prototype:
 * inside its own macro a name is not expanded again, so __typeof__ sees
 * OpenSSL's declaration. */
void *const *th_crypto(void);
#define TH_CRYPTO_FN(f) ((__typeof__(&f))th_crypto()[th_crypto_i_##f])

/* Open libcrypto now; false with a message in ERR (ERRLEN bytes) naming the
 * library and what failed. For features that can refuse to start cleanly. */
bool th_crypto_open(char *err, size_t errlen);

/* OPENSSL_thread_stop() when libcrypto is open; nothing otherwise, so a
 * thread that never used it does not open it on its way out. */
void th_crypto_thread_stop(void);

#define BN_bin2bn TH_CRYPTO_FN(BN_bin2bn)
#define BN_free TH_CRYPTO_FN(BN_free)
#define CRYPTO_free TH_CRYPTO_FN(CRYPTO_free)
#define CRYPTO_memcmp TH_CRYPTO_FN(CRYPTO_memcmp)
#define ECDSA_SIG_free TH_CRYPTO_FN(ECDSA_SIG_free)
#define ECDSA_SIG_new TH_CRYPTO_FN(ECDSA_SIG_new)
#define ECDSA_SIG_set0 TH_CRYPTO_FN(ECDSA_SIG_set0)
#define EVP_DecodeBlock TH_CRYPTO_FN(EVP_DecodeBlock)
#define EVP_DigestVerify TH_CRYPTO_FN(EVP_DigestVerify)
#define EVP_DigestVerifyInit_ex TH_CRYPTO_FN(EVP_DigestVerifyInit_ex)
#define EVP_EncodeBlock TH_CRYPTO_FN(EVP_EncodeBlock)
#define EVP_MD_CTX_free TH_CRYPTO_FN(EVP_MD_CTX_free)
#define EVP_MD_CTX_new TH_CRYPTO_FN(EVP_MD_CTX_new)
#define EVP_PKEY_CTX_free TH_CRYPTO_FN(EVP_PKEY_CTX_free)
#define EVP_PKEY_CTX_new_from_name TH_CRYPTO_FN(EVP_PKEY_CTX_new_from_name)
#define EVP_PKEY_CTX_new_from_pkey TH_CRYPTO_FN(EVP_PKEY_CTX_new_from_pkey)
#define EVP_PKEY_free TH_CRYPTO_FN(EVP_PKEY_free)
#define EVP_PKEY_fromdata TH_CRYPTO_FN(EVP_PKEY_fromdata)
#define EVP_PKEY_fromdata_init TH_CRYPTO_FN(EVP_PKEY_fromdata_init)
#define EVP_PKEY_public_check TH_CRYPTO_FN(EVP_PKEY_public_check)
#define EVP_sha256 TH_CRYPTO_FN(EVP_sha256)
#define HMAC TH_CRYPTO_FN(HMAC)
#define OPENSSL_cleanse TH_CRYPTO_FN(OPENSSL_cleanse)
#define OSSL_PARAM_BLD_free TH_CRYPTO_FN(OSSL_PARAM_BLD_free)
#define OSSL_PARAM_BLD_new TH_CRYPTO_FN(OSSL_PARAM_BLD_new)
#define OSSL_PARAM_BLD_push_BN TH_CRYPTO_FN(OSSL_PARAM_BLD_push_BN)
#define OSSL_PARAM_BLD_push_octet_string TH_CRYPTO_FN(OSSL_PARAM_BLD_push_octet_string)
#define OSSL_PARAM_BLD_push_utf8_string TH_CRYPTO_FN(OSSL_PARAM_BLD_push_utf8_string)
#define OSSL_PARAM_BLD_to_param TH_CRYPTO_FN(OSSL_PARAM_BLD_to_param)
#define OSSL_PARAM_free TH_CRYPTO_FN(OSSL_PARAM_free)
#define SHA256 TH_CRYPTO_FN(SHA256)
#define i2d_ECDSA_SIG TH_CRYPTO_FN(i2d_ECDSA_SIG)
#define OPENSSL_thread_stop() th_crypto_thread_stop()

#endif
