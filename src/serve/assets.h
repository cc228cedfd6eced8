/*
 * The explorer page's files, compiled into the binary (the table is generated at build
 * time from share/web by embed.py), and the security headers every response carries: the
 * page may load only its own files and talk only to its own origin, so text from a corpus
 * that reaches it can never run as script or load anything.
 */
#ifndef SRV_ASSETS_H
#define SRV_ASSETS_H

#include <stddef.h>

typedef struct srv_asset {
    const char *path;         ///< "/index.html", "/app.js", ...
    const char *type;         ///< Content-Type
    const unsigned char *data;
    size_t len;
} srv_asset;

/** The policy: this origin's script, style, fetches and images (and data: images) only;
 *  no inline script or style, no plugins, frames, forms or base URL. */
#define SRV_CSP                                                                                                        \
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "              \
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The security headers as raw HTTP header lines, for a response written by hand. */
#define SRV_SECURITY_HEADER_LINES                                                                                      \
    "Content-Security-Policy: " SRV_CSP "\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"          \
    "Referrer-Policy: no-referrer\r\n"

/** The generated table, ended by a row with a NULL path. */
extern const srv_asset srv_assets[];

/** The file served at `url` ("/" is /index.html), or NULL. */
const srv_asset *srv_asset_find(const char *url);

struct MHD_Response;
/** Adds Content-Security-Policy, X-Content-Type-Options and friends. 0, or -1 if one
 *  could not be added. */
int srv_security_headers(struct MHD_Response *res);

#endif
