/* Fuzz target: the whole HTTP server as a client meets it. The input is written, as it
 * is, to a connection of the real server (libmicrohttpd, the routing of http.c, the
 * watchdog of watch.c, a catalog with one small built dataset), and the whole reply is
 * read back: request line, method, URL and its percent-encoding, headers, Content-Length
 * and chunked bodies, Expect: 100-continue and pipelined requests all come from the
 * input. There is no port: the daemon listens on nothing and is handed one end of a
 * socket pair per input, so runs neither collide nor wait for a kernel's TCP timers.
 *
 * Every reply must be a sequence of well-formed HTTP/1.x responses, read to the end
 * within a bound (a hang aborts rather than leaving a stuck process); every response the
 * server wrote carries the security headers, and its body, when it is JSON or an error,
 * is JSON, an error being {"error": {"message", "type", "code"}}. libmicrohttpd answers
 * some requests without asking the server (a malformed request line or header, a bad
 * chunk, a Content-Length over 64 bits, a header block over the connection's memory):
 * those answers are its own small HTML pages without our headers, and are accepted as
 * such only for the statuses it uses. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz_common.h"
#include "server.h"

/* A whole exchange must end within this; longer than run.sh's -timeout, so that libFuzzer
 * reports a hang as a timeout, and a bound where no -timeout is given (the corpus test). */
#define EXCHANGE_SECONDS 20

static srv_config cfg;
static srv_daemon *daemon_;
static ig_catalog *cat;

static void teardown(void)
{
    srv_stop(daemon_);
    daemon_ = NULL;
    ig_catalog_close(&cat);
    if (cfg.log)
        fclose(cfg.log);
}

static void setup(void)
{
    cat = fuzz_catalog();
    cfg.cat = cat;
    cfg.host = "127.0.0.1";
    cfg.threads = 1;  /* one worker: replies in a repeatable order, and less to share the cores with */
    cfg.timeout = 30; /* the input's end is a half-close, so the 408 watchdog never needs to fire */
    cfg.deadline = 5; /* a slow operation is cancelled (503) well within EXCHANGE_SECONDS */
    cfg.body_limit = 2048; /* small enough that inputs of libFuzzer's sizes reach the 413 */
    cfg.fake_clock = 1;
    if (!(cfg.log = fopen("/dev/null", "w")))
        abort();
    if (!(daemon_ = srv_start(&cfg, 0)))
        abort();
    atexit(teardown); /* after fuzz_tmpdir's: runs first, before the directory goes */
}

static void fail(const char *what, const char *reply, size_t n)
{
    fprintf(stderr, "fuzz_http_raw: %s\n--- reply (%zu bytes) ---\n%.*s\n---\n", what, n, (int)(n > 4000 ? 4000 : n),
            reply ? reply : "");
    abort();
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Writes the input and reads the reply to its end, interleaved, so that neither side
 * blocks on a full socket buffer. The writing side is shut once the server has read the
 * whole input (or has stopped reading): the server then sees the end of the input as a
 * client's end. Shutting it at once would race libmicrohttpd, which misses an end that
 * arrives with the last bytes; the watchdog closes such connections, but only after a
 * grace that would slow every run on an incomplete request. */
static char *exchange(int fd, int server_fd, const uint8_t *data, size_t size, size_t *outlen)
{
    size_t sent = 0, len = 0, cap = 1 << 16;
    char *out = malloc(cap);
    if (!out)
        abort();
    enum { WRITING, DRAINING, DONE } phase = size ? WRITING : DRAINING;
    int unread = -1;
    double end = now() + EXCHANGE_SECONDS, unread_since = 0;
    for (;;) {
        double t = now(), left = end - t;
        if (left <= 0)
            fail("no end of the reply within the bound (a hang)", out, len);
        if (phase == DRAINING) {
            int q = 0;
            /* Its unread bytes: 0 once read; no longer changing when the server stopped reading
             * (it answers an error without the rest); an error once it closed the socket. */
            if (ioctl(server_fd, FIONREAD, &q) || q == 0 || (q == unread && t - unread_since >= 0.05)) {
                (void)shutdown(fd, SHUT_WR); /* fails when the server has closed already */
                phase = DONE;
            } else if (q != unread) {
                unread = q;
                unread_since = t;
            }
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN | (phase == WRITING ? POLLOUT : 0)};
        int rc = poll(&pf, 1, phase == DRAINING ? 2 : (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            abort();
        if (rc == 0)
            continue;
        if (phase == WRITING && (pf.revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = send(fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0)
                sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EINTR)
                sent = size; /* the server closed its reading side: the rest is never read */
            if (sent == size)
                phase = DRAINING;
        }
        if (pf.revents & (POLLIN | POLLERR | POLLHUP)) {
            if (cap - len < 4096) {
                char *p = realloc(out, cap *= 2);
                if (!p)
                    abort();
                out = p;
            }
            ssize_t r = recv(fd, out + len, cap - len - 1, MSG_DONTWAIT);
            if (r > 0)
                len += (size_t)r;
            else if (r == 0 || (errno != EAGAIN && errno != EINTR))
                break; /* end of the reply (a reset after the last byte is an end too) */
        }
    }
    out[len] = '\0';
    *outlen = len;
    return out;
}

/* A header's value in the header block [h, e) (name compared without case), or NULL. */
static const char *header(const char *h, const char *e, const char *name, size_t *vlen)
{
    size_t nl = strlen(name);
    for (const char *l = h; l < e;) {
        const char *eol = memchr(l, '\n', (size_t)(e - l));
        if (!eol)
            eol = e;
        if ((size_t)(eol - l) > nl && l[nl] == ':' && !strncasecmp(l, name, nl)) {
            const char *v = l + nl + 1;
            while (v < eol && *v == ' ')
                v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' '))
                ve--;
            *vlen = (size_t)(ve - v);
            return v;
        }
        l = eol + 1;
    }
    return NULL;
}

/* Decodes a chunked body starting at p (end e) into a malloc'd buffer; sets *next past it.
 * NULL when it is malformed or cut. */
static char *dechunk(const char *p, const char *e, size_t *blen, const char **next)
{
    size_t len = 0;
    char *b = malloc(1);
    if (!b)
        abort();
    for (;;) {
        char *x;
        errno = 0;
        unsigned long long n = strtoull(p, &x, 16);
        if (x == p || errno || x + 2 > e || x[0] != '\r' || x[1] != '\n' || n > (size_t)(e - x)) {
            free(b);
            return NULL;
        }
        p = x + 2;
        if (n == 0) {
            if (p + 2 > e || p[0] != '\r' || p[1] != '\n') { /* no trailers from this server */
                free(b);
                return NULL;
            }
            *next = p + 2;
            b[len] = '\0';
            *blen = len;
            return b;
        }
        if ((size_t)(e - p) < n + 2 || p[n] != '\r' || p[n + 1] != '\n') {
            free(b);
            return NULL;
        }
        char *nb = realloc(b, len + n + 1);
        if (!nb)
            abort();
        b = nb;
        memcpy(b + len, p, n);
        len += n;
        p += n + 2;
    }
}

static int is_error_object(const char *body, size_t n)
{
    json_error_t je;
    json_t *j = json_loadb(body, n, 0, &je);
    json_t *err = json_object_get(j, "error");
    int ok = json_is_object(j) && json_object_size(j) == 1 && json_is_object(err) &&
             json_is_string(json_object_get(err, "message")) && json_is_string(json_object_get(err, "type")) &&
             json_is_string(json_object_get(err, "code"));
    json_decref(j);
    return ok;
}

static int is_json(const char *body, size_t n)
{
    json_error_t je;
    json_t *j = json_loadb(body, n, 0, &je);
    json_decref(j);
    return j != NULL;
}

/* libmicrohttpd's own answers: the statuses it sends without asking the server, with its
 * HTML pages (or no body when it was built without messages). */
static int mhd_own(unsigned st, const char *body, size_t n)
{
    int status_ok = st == 400 || st == 413 || st == 414 || st == 431 || st == 500 || st == 505;
    return status_ok && (n == 0 || !strncmp(body, "<html><head><title>", n < 19 ? n : 19));
}

/* Checks every response in the reply. */
static void check(const char *r, size_t n)
{
    const char *p = r, *e = r + n;
    while (p < e) {
        const char *he = memmem(p, (size_t)(e - p), "\r\n\r\n", 4);
        if (!he)
            fail("a response head without its end", r, n);
        unsigned st = 0;
        char sp = 0;
        if (e - p < 13 || (strncmp(p, "HTTP/1.1 ", 9) && strncmp(p, "HTTP/1.0 ", 9)) ||
            sscanf(p + 9, "%3u%c", &st, &sp) != 2 || sp != ' ' || st < 100 || st > 599)
            fail("a response without a status line", r, n);
        const char *h = memchr(p, '\n', (size_t)(he - p));
        h = h ? h + 1 : he;
        const char *body = he + 4;
        if (st < 200) { /* 100 Continue: a head only */
            p = body;
            continue;
        }
        size_t vl, bl = 0;
        const char *te = header(h, he + 2, "Transfer-Encoding", &vl);
        const char *cl = header(h, he + 2, "Content-Length", &vl);
        char *decoded = NULL;
        const char *next;
        if (te && vl == 7 && !strncasecmp(te, "chunked", 7)) {
            if (!(decoded = dechunk(body, e, &bl, &next)))
                fail("a malformed or cut chunked body", r, n);
        } else if (cl) {
            char *x;
            unsigned long long v = strtoull(cl, &x, 10);
            /* a HEAD's answer names the length of a body it leaves out: the next response
             * follows at once (no body of ours starts so), or the reply ends */
            if (body == e || ((size_t)(e - body) >= 7 && !strncmp(body, "HTTP/1.", 7)))
                v = 0;
            if (x == cl || v > (size_t)(e - body))
                fail("a body shorter than its Content-Length", r, n);
            bl = (size_t)v;
            next = body + bl;
        } else if (st == 204 || st == 304) {
            next = body;
        } else { /* delimited by the close (HTTP/1.0 streaming) */
            bl = (size_t)(e - body);
            next = e;
        }
        const char *b = decoded ? decoded : body;
        size_t ctl;
        const char *ct = header(h, he + 2, "Content-Type", &ctl);
        int json_type = ct && ctl >= 16 && !strncmp(ct, "application/json", 16);
        int ours = header(h, he + 2, "X-Content-Type-Options", &vl) != NULL;
        if (st >= 400 && !ours) {
            if (!mhd_own(st, b, bl))
                fail("an error answered without the security headers, not libmicrohttpd's own", r, n);
        } else if (!ours) {
            fail("a response without the security headers", r, n);
        } else if (st >= 400 && bl && !is_error_object(b, bl)) {
            fail("an error whose body is not {\"error\": {\"message\", \"type\", \"code\"}}", r, n);
        } else if (st >= 400 && !json_type) {
            fail("an error that is not application/json", r, n);
        } else if (bl && json_type && !is_json(b, bl)) {
            fail("an application/json body that is not JSON", r, n);
        }
        free(decoded);
        p = next;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!daemon_)
        setup();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        abort();
    /* sv[0] is the server's now, even on failure: exchange only asks how much of it is unread */
    if (srv_add_connection(daemon_, sv[0])) {
        fprintf(stderr, "fuzz_http_raw: the server refused a connection\n");
        abort();
    }
    size_t n;
    char *r = exchange(sv[1], sv[0], data, size, &n);
    if (close(sv[1]))
        abort();
    if (getenv("FUZZ_HTTP_RAW_SHOW")) /* to read a reproducer's reply */
        fprintf(stderr, "--- reply (%zu bytes) ---\n%.*s\n---\n", n, (int)n, r);
    check(r, n);
    free(r);
    return 0;
}
