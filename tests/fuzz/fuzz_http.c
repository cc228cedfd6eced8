/* Fuzz target: the HTTP server's request handling below libmicrohttpd. The first byte
 * picks the endpoint (every engine operation, /v1/completions, /v1/chat/completions); the
 * rest is the request body. The body goes through the strict JSON parser, the JSON codec
 * of the operation's fields and the operation itself, as a request would; every reply
 * must be a status with a JSON body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "server.h"

static server srv;
static srv_config cfg;
static size_t nops;

static void setup(void)
{
    ig_catalog *cat = fuzz_catalog();
    cfg.cat = cat;
    cfg.fake_clock = 1;
    cfg.body_limit = 1 << 20;
    cfg.log = fopen("/dev/null", "w");
    if (srv_datasets_init(&srv, &cfg))
        abort();
    for (const ig_op *const *op = ig_ops(); *op; op++)
        nops++;
}

static void check_reply(reply r)
{
    json_error_t je;
    json_t *j = r.body ? json_loads(r.body, 0, &je) : NULL;
    if (!j || r.status < 200 || r.status > 599)
        abort(); /* every answer is JSON with a real status */
    json_decref(j);
    free(r.body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cfg.cat)
        setup();
    if (size < 1)
        return 0;
    size_t which = data[0] % (nops + 2);
    ig_error e;
    json_t *body = ig_json_read((const char *)data + 1, size - 1, "the request body", &e);
    if (!body) {
        check_reply(srv_error_ig(&e));
        return 0;
    }
    if (json_is_object(body)) {
        json_object_del(body, "stream"); /* streaming needs a connection */
        if (which < nops)
            check_reply(srv_engine(&srv, ig_ops()[which], body, NULL));
        else
            check_reply(srv_completions(&srv, body, which == nops + 1, NULL));
    }
    json_decref(body);
    return 0;
}
