/*
 * Replies: every answer is JSON, errors included ({"error": {"message", "type",
 * "code"}}, the same shape for a bad field, an unknown dataset, a body over the limit or
 * a slow client).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "server.h"

static const char *status_type(unsigned st) { return st >= 500 ? "server_error" : "invalid_request_error"; }

unsigned srv_status_of(int code)
{
    switch (code) {
    case IG_ENOTFOUND: return 404;
    case IG_EUSAGE:
    case IG_EINVAL:
    case IG_EEXISTS: return 400;
    case IG_EBUSY:
    case IG_ECANCELLED:
    case IG_ENOMEM: return 503;
    default: return 500;
    }
}

json_t *srv_error_json(unsigned status, const char *code, const char *msg)
{
    return json_pack("{s:{s:s,s:s,s:s}}", "error", "message", msg, "type", status_type(status), "code", code);
}

static reply from_json(unsigned status, json_t *o)
{
    /* JSON_ENSURE_ASCII off: messages may quote UTF-8 text; invalid UTF-8 never reaches here */
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!s)
        s = strdup("{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\",\"code\":\"internal\"}}");
    return (reply){status, s, 0};
}

reply srv_error(unsigned status, const char *code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* a message may quote request bytes: keep it valid UTF-8, each bad byte shown as U+FFFD
     * (a cut would make "/v1/\xffcount" read as "/v1/") */
    size_t bad;
    if (ig_utf8_valid((const uint8_t *)msg, strlen(msg), &bad))
        return from_json(status, srv_error_json(status, code, msg));
    char *fixed = strdup(msg);
    if (fixed && (fixed = ig_utf8_repair(fixed))) {
        reply r = from_json(status, srv_error_json(status, code, fixed));
        free(fixed);
        return r;
    }
    msg[bad] = '\0';
    return from_json(status, srv_error_json(status, code, msg));
}

reply srv_error_ig(const ig_error *e)
{
    char msg[IG_ERRMSG_MAX + 256];
    ig_field_msg_render(e->msg, "\"", '_', "\"", msg, sizeof msg);
    unsigned st = srv_status_of(e->code);
    return srv_error(st, ig_error_code_name(e->code), "%s", msg);
}

reply srv_ok(char *body) { return (reply){200, body, 0}; }

void srv_format_ms(double seconds, int fake, char *buf, size_t n)
{
    /* the shell's rounding: nanosecond resolution, as a JSON number */
    double ms = fake ? 0 : round(seconds * 1e9) / 1e6;
    cJSON *v = cJSON_CreateNumber(ms);
    char *s = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    snprintf(buf, n, "%s", s ? s : "0");
    free(s);
}

reply srv_cancelled(const server *s)
{
    if (__atomic_load_n(&s->stopping, __ATOMIC_RELAXED))
        return srv_error(503, "cancelled", "the server is stopping");
    /* OpenAI's client libraries retry a 503 unless told not to: the same request would meet the
     * same deadline, computed again from the start */
    reply r = srv_error(503, "cancelled",
                        "the request was stopped: its deadline passed (serve --deadline, %u s), or its client "
                        "closed its side of the connection",
                        s->cfg->deadline);
    r.no_retry = 1;
    return r;
}

