/* serve-watch.c: request deadlines for the HTTP server (see serve-watch.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "assets.h"
#include "clock.h"
#include "watch.h"
#include "workers.h"

/* After a 408, how long a client may go on sending before the connection is closed on it. */
#define LINGER 1.0
/* How long a connection that owes a request (or idles) may stay open after its client has ended its
 * side and every byte it sent has been read: the worker takes up buffered requests at once, so a
 * connection still waiting after this waits for bytes that will never come. */
#define HUP_GRACE 0.3

enum { READING, ANSWERING, IDLE, CUT, CLOSED };

typedef struct sw_conn {
    struct sw_conn *prev, *next;
    struct sw_watch *w;
    int fd;
    int state;
    double since; /* monotonic seconds when the current phase began */
    double hup;   /* when the client was first seen to have ended its side with nothing left unread (0: not) */
    volatile int cancel; /* the request being answered must stop: client gone or deadline passed */
} sw_conn;

struct sw_watch {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t thread;
    int stopping;
    double timeout;
    double deadline; ///< seconds a request may be answered for before it is cancelled
    unsigned max_conns; ///< connections libmicrohttpd takes at once
    unsigned open;      ///< connections tracked and not yet reported closed
    char *msg;      ///< the whole 408 response, written once at start
    size_t msglen;
    char *crowded_msg; ///< the same, when the server is crowded (its own deadline)
    size_t crowded_msglen;
    sw_conn *head;
    void (*on_cancel)(void *arg);
    void *on_cancel_arg;
};


/* The answer is written straight to the socket: libmicrohttpd offers no way to queue a response for
 * a request whose headers have not all arrived. Its worker writes nothing before the request is
 * complete, so the two never interleave; shutting the socket down then makes the worker read EOF and
 * close the connection through its usual path. */
static void answer_408(const sw_watch *w, sw_conn *x, int crowded)
{
    /* A client that does not read just misses the courtesy; never block the watchdog on it. */
    (void)send(x->fd, crowded ? w->crowded_msg : w->msg, crowded ? w->crowded_msglen : w->msglen,
               MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Whether the client has ended its side of the connection and every byte it sent has been read. */
static int client_gone(const sw_conn *x)
{
    struct pollfd pf = {.fd = x->fd, .events = POLLRDHUP};
    int unread = 0;
    return poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)) &&
           ioctl(x->fd, FIONREAD, &unread) == 0 && unread == 0;
}

static void *watch_main(void *arg)
{
    sw_watch *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->stopping) {
        double t = srv_now();
        int cancelled = 0; /* a request being answered has its flag up */
        int crowded = w->open >= SW_CROWDED(w->max_conns);
        double timeout = crowded && w->timeout > SW_CROWDED_TIMEOUT ? SW_CROWDED_TIMEOUT : w->timeout;
        for (sw_conn *x = w->head; x; x = x->next) {
            if (x->state == CUT && t - x->since >= LINGER) {
                shutdown(x->fd, SHUT_RDWR);
                x->state = CLOSED;
            }
            if (x->state == ANSWERING) {
                /* The worker is busy computing: stop it when no one waits for the answer (the
                 * client closed its side) or the request has had its time. */
                struct pollfd pf = {.fd = x->fd, .events = POLLRDHUP};
                if (!x->cancel && (t - x->since >= w->deadline ||
                                   (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR)))))
                    __atomic_store_n(&x->cancel, 1, __ATOMIC_RELAXED); /* read by the worker */
                /* raised now or before (perhaps before its request joined the queue) */
                cancelled |= x->cancel;
                continue;
            }
            if (x->state != READING && x->state != IDLE)
                continue;
            /* libmicrohttpd can miss the end of a client's side when it comes with the client's
             * last bytes (with epoll, edge-triggered, a short read is taken as "nothing more to
             * read"; this guard stays for any event loop it is built with): a
             * client that sends part of a request and closes would hold its connection until the
             * timeout. Once the client has ended its side and the worker has read everything, the
             * connection can only wait; after a grace for the worker to take up a whole request it
             * has buffered, it is closed as libmicrohttpd closes one it sees end. */
            if (client_gone(x)) {
                if (!x->hup)
                    x->hup = t;
                else if (t - x->hup >= HUP_GRACE) {
                    (void)shutdown(x->fd, SHUT_RDWR); /* fails only when the socket is gone already */
                    x->state = CLOSED;
                    continue;
                }
            } else {
                x->hup = 0;
            }
            if (x->state == IDLE && crowded) {
                shutdown(x->fd, SHUT_RDWR);
                x->state = CLOSED;
                continue;
            }
            if (t - x->since < timeout)
                continue;
            if (x->state == IDLE) {
                shutdown(x->fd, SHUT_RDWR);
                x->state = CLOSED;
                continue;
            }
            /* Only the sending side is shut at once: closing a socket with unread input sends a
             * reset, and a client still sending its body would lose the 408 with it. */
            answer_408(w, x, timeout < w->timeout);
            shutdown(x->fd, SHUT_WR);
            x->state = CUT;
            x->since = t;
        }
        if (cancelled && w->on_cancel) {
            pthread_mutex_unlock(&w->mu);
            w->on_cancel(w->on_cancel_arg);
            pthread_mutex_lock(&w->mu);
        }
        /* Deadlines are checked ten times a second: a client is cut within 0.1 s of its deadline. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += 100000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->wake, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* The whole 408 response for a JSON body (malloc'd), its length in *len. */
static char *response_408(const char *body, size_t *len)
{
    size_t cap = strlen(body) + 160 + sizeof SRV_SECURITY_HEADER_LINES;
    char *msg = malloc(cap);
    if (msg)
        *len = (size_t)snprintf(msg, cap,
                                "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n"
                                SRV_SECURITY_HEADER_LINES "Content-Length: %zu\r\n\r\n%s",
                                strlen(body), body);
    return msg;
}

sw_watch *sw_start(unsigned timeout_s, unsigned deadline_s, unsigned max_conns, const char *body,
                   const char *crowded_body)
{
    sw_watch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->timeout = timeout_s;
    w->deadline = deadline_s;
    w->max_conns = max_conns;
    w->msg = response_408(body, &w->msglen);
    w->crowded_msg = response_408(crowded_body, &w->crowded_msglen);
    if (!w->msg || !w->crowded_msg) {
        free(w->msg);
        free(w->crowded_msg);
        free(w);
        return NULL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->wake, &ca);
    pthread_condattr_destroy(&ca);
    int rc = pthread_create(&w->thread, NULL, watch_main, w);
    if (rc) {
        errno = rc;
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->mu);
        free(w->msg);
        free(w->crowded_msg);
        free(w);
        return NULL;
    }
    return w;
}

void sw_on_cancel(sw_watch *w, void (*on_cancel)(void *arg), void *arg)
{
    pthread_mutex_lock(&w->mu);
    w->on_cancel = on_cancel;
    w->on_cancel_arg = arg;
    pthread_mutex_unlock(&w->mu);
}

void sw_cancel_all(sw_watch *w)
{
    pthread_mutex_lock(&w->mu);
    for (sw_conn *x = w->head; x; x = x->next)
        if (x->state == ANSWERING)
            __atomic_store_n(&x->cancel, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&w->mu);
}

void sw_stop(sw_watch *w)
{
    if (!w)
        return;
    srv_threads_stop(&w->mu, &w->wake, &w->stopping, &w->thread, 1);
    while (w->head) { /* MHD_stop_daemon reports every close, so this only guards against leaks */
        sw_conn *x = w->head;
        w->head = x->next;
        free(x);
    }
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->mu);
    free(w->msg);
    free(w->crowded_msg);
    free(w);
}

void sw_notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    sw_watch *w = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        sw_conn *x = ci ? calloc(1, sizeof *x) : NULL;
        *socket_context = x;
        if (!x)
            return; /* untracked: libmicrohttpd's own timeout still applies */
        x->w = w;
        x->fd = ci->connect_fd;
        x->state = READING; /* a fresh connection owes us a request */
        x->since = srv_now();
        pthread_mutex_lock(&w->mu);
        x->next = w->head;
        if (w->head)
            w->head->prev = x;
        w->head = x;
        w->open++;
        pthread_mutex_unlock(&w->mu);
        return;
    }
    /* Reported before libmicrohttpd closes the socket, so the watchdog never writes to a reused fd. */
    sw_conn *x = *socket_context;
    if (!x)
        return;
    pthread_mutex_lock(&w->mu);
    if (x->prev)
        x->prev->next = x->next;
    else
        w->head = x->next;
    if (x->next)
        x->next->prev = x->prev;
    w->open--;
    pthread_mutex_unlock(&w->mu);
    free(x);
    *socket_context = NULL;
}

static sw_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Moves a connection into a new phase unless the watchdog has already cut it; returns -1 if it has. */
static int enter(struct MHD_Connection *c, int state, int keep_clock)
{
    sw_conn *x = conn_of(c);
    if (!x)
        return 0;
    pthread_mutex_lock(&x->w->mu);
    int cut = x->state == CUT || x->state == CLOSED;
    if (!cut) {
        if (!(keep_clock && x->state == state))
            x->since = srv_now();
        x->state = state;
        x->hup = 0;
        __atomic_store_n(&x->cancel, 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&x->w->mu);
    return cut ? -1 : 0;
}

void *sw_request_started(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)uri;
    /* The first request's clock runs from accept: a client had the whole deadline to send it. */
    enter(c, READING, 1);
    return NULL;
}

int sw_request_complete(struct MHD_Connection *c) { return enter(c, ANSWERING, 0); }

void sw_request_done(struct MHD_Connection *c) { enter(c, IDLE, 0); }

const volatile int *sw_cancel_flag(struct MHD_Connection *c)
{
    static const volatile int never = 0;
    sw_conn *x = conn_of(c);
    return x ? &x->cancel : &never;
}
