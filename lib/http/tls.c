/* TLS for the HTTP client and server through OpenSSL and libevent's
 * bufferevent_openssl: a client checks the server's certificate against
 * the system's CA store (or a CA file) and its host name; a server serves
 * a certificate and key from files, read again on reload. TLS 1.2 at
 * least. */
#include "buildconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "http/http.h"
#include "util/util.h"

/* OpenSSL's last error, in words, into err after what. */
static int
tls_error(char *err, size_t errlen, int e, const char *what)
{
	char	 why[256];
	unsigned long code = ERR_get_error();

	if (code != 0) {
		ERR_error_string_n(code, why, sizeof why);
		ERR_clear_error();
		return flaky_error(err, errlen, e, "%s: %s", what, why);
	}
	return flaky_error(err, errlen, e, "%s", what);
}

/* A client context (http.h). */
SSL_CTX *
flaky_tls_client_ctx(const char *ca_file, char *err, size_t errlen)
{
	SSL_CTX	*ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		tls_error(err, errlen, ENOMEM, "TLS: cannot make a context");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (ca_file != NULL ? SSL_CTX_load_verify_locations(ctx, ca_file,
	    NULL) != 1 : SSL_CTX_set_default_verify_paths(ctx) != 1) {
		char	 what[512];

		snprintf(what, sizeof what, "TLS: cannot load %s",
		    ca_file != NULL ? ca_file : "the system's CA store");
		tls_error(err, errlen, EINVAL, what);
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/* A client connection's bufferevent (http.h): SNI, and the name or
 * address the certificate must carry. */
struct bufferevent *
flaky_tls_client_bev(struct event_base *base, SSL_CTX *ctx,
    const char *host, char *err, size_t errlen)
{
	struct bufferevent *bev;
	unsigned char	 addr[16];
	SSL		*ssl;
	int		 literal;

	if ((ssl = SSL_new(ctx)) == NULL) {
		tls_error(err, errlen, ENOMEM, "TLS: out of memory");
		return NULL;
	}
	literal = inet_pton(AF_INET, host, addr) == 1 ||
	    inet_pton(AF_INET6, host, addr) == 1;
	if (!literal)
		SSL_set_tlsext_host_name(ssl, host);
	if ((literal ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
	    host) : SSL_set1_host(ssl, host)) != 1) {
		SSL_free(ssl);
		flaky_error(err, errlen, EINVAL, "TLS: cannot check host %s",
		    host);
		return NULL;
	}
	bev = bufferevent_openssl_socket_new(base, -1, ssl,
	    BUFFEREVENT_SSL_CONNECTING,
	    BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
	if (bev == NULL) {
		SSL_free(ssl);
		flaky_error(err, errlen, ENOMEM, "TLS: out of memory");
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

/* A server context of a certificate chain and its key (http.h). */
SSL_CTX *
flaky_tls_server_ctx(const char *cert_file, const char *key_file, char *err,
    size_t errlen)
{
	SSL_CTX	*ctx;
	char	 what[600];

	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
		tls_error(err, errlen, ENOMEM, "TLS: cannot make a context");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_CIPHER_SERVER_PREFERENCE);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		snprintf(what, sizeof what, "%s: expected a PEM certificate "
		    "(chain)", cert_file);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) !=
	    1) {
		snprintf(what, sizeof what, "%s: expected the PEM private key "
		    "of %s", key_file, cert_file);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(what, sizeof what, "%s: not the key of %s", key_file,
		    cert_file);
		goto fail;
	}
	return ctx;
fail:
	tls_error(err, errlen, EINVAL, what);
	SSL_CTX_free(ctx);
	return NULL;
}
