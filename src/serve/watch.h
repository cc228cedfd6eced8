/* serve-watch: request deadlines for the HTTP server.
 *
 * libmicrohttpd only knows an inactivity timeout, and when it fires it closes the socket without a
 * word: a client that trickles its request byte by byte is never cut off, and one that stalls never
 * learns why the connection died. The watchdog follows every connection through its phases (reading
 * a request, being answered, idle between keep-alive requests) and, from one thread of its own,
 * answers "408 Request Timeout" to a client that has not sent a whole request within the deadline,
 * and quietly closes keep-alive connections idle for as long, and those whose client has ended its
 * side (libmicrohttpd can miss that end). The libmicrohttpd worker then sees the socket shut down
 * and releases the connection itself. A request being answered is never cut, but its cancel flag is
 * raised when its client closes the connection or its deadline passes, so that the operation
 * computing the answer stops and frees its worker. */
#ifndef SERVE_WATCH_H
#define SERVE_WATCH_H

#include <microhttpd.h>

typedef struct sw_watch sw_watch;

/* With SW_CROWDED(max) of the max connections open, the server is crowded: a connection idle
 * between keep-alive requests is closed at once (its client reconnects when it has a request, as
 * after any keep-alive timeout), and a request must be whole within SW_CROWDED_TIMEOUT seconds
 * rather than --timeout. Otherwise clients that open connections and send nothing, or one byte
 * at a time, would hold every place until --timeout while real requests are turned away. A
 * client on a working link sends a request's head and a body of a few MB well within it. */
#define SW_CROWDED(max) ((max) / 4 * 3)
#define SW_CROWDED_TIMEOUT 2

/* Starts the watchdog thread; timeout_s is the whole-request deadline, deadline_s how long a request
 * may be answered for, max_conns the connections libmicrohttpd takes at once (SW_CROWDED of them
 * open: the server is crowded),
 * body the JSON error a 408 carries, crowded_body the one it carries then. NULL when out of
 * resources. */
sw_watch *sw_start(unsigned timeout_s, unsigned deadline_s, unsigned max_conns, const char *body,
                   const char *crowded_body);
/* After each round in which a request being answered has its cancel flag up, the watchdog
 * calls on_cancel(arg) from its thread, outside its lock (NULL: nothing): requests waiting
 * for a compute thread whose client has gone can then be answered at once. Set before
 * connections arrive. */
void sw_on_cancel(sw_watch *w, void (*on_cancel)(void *arg), void *arg);
/* Raises the cancel flag of every request being answered (the server stops). */
void sw_cancel_all(sw_watch *w);
/* Stops the thread and frees the table; call after MHD_stop_daemon. */
void sw_stop(sw_watch *w);

/* For MHD_OPTION_NOTIFY_CONNECTION (cls = the watch): tracks connections from accept to close. */
void sw_notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code);
/* For MHD_OPTION_URI_LOG_CALLBACK: a request line arrived, so a request is being read. Returns NULL
 * (the request's initial context). */
void *sw_request_started(void *cls, const char *uri, struct MHD_Connection *c);
/* The whole request is in and is about to be answered. Returns 0, or -1 when the watchdog has already
 * answered 408: the caller must then drop the request (return MHD_NO). */
int sw_request_complete(struct MHD_Connection *c);
/* The answer has gone out (MHD_OPTION_NOTIFY_COMPLETED): the connection idles until its next request. */
void sw_request_done(struct MHD_Connection *c);

/* The cancel flag of the request being answered on c (an operation's ig_op_ctx.cancel): raised by
 * the watchdog when the client goes away or the deadline passes. Never NULL. */
const volatile int *sw_cancel_flag(struct MHD_Connection *c);

#endif
