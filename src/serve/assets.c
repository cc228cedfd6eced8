/*
 * Lookup of the explorer's embedded files, and the headers that confine the page: a
 * Content-Security-Policy that allows only this origin's script, style and fetches (no
 * inline script, no frames, no forms), nosniff so a JSON body is never read as HTML, and
 * no referrer so a shared URL's query does not leak to another site.
 */
#include <microhttpd.h>
#include <string.h>

#include "assets.h"

const srv_asset *srv_asset_find(const char *url)
{
    if (!strcmp(url, "/"))
        url = "/index.html";
    for (const srv_asset *a = srv_assets; a->path; a++)
        if (!strcmp(a->path, url))
            return a;
    return NULL;
}

int srv_security_headers(struct MHD_Response *res)
{
    if (MHD_add_response_header(res, "Content-Security-Policy", SRV_CSP) != MHD_YES ||
        MHD_add_response_header(res, "X-Content-Type-Options", "nosniff") != MHD_YES ||
        MHD_add_response_header(res, "X-Frame-Options", "DENY") != MHD_YES ||
        MHD_add_response_header(res, "Referrer-Policy", "no-referrer") != MHD_YES)
        return -1;
    return 0;
}
