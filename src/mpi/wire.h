/*
 * The messages between the ranks of infinigram-mpi: a request or a reply is one byte
 * string of little-endian integers and length-prefixed byte strings, written with the
 * put functions into a growing buffer and read back with the get functions, which never
 * read past the end (a short or garbled message makes every later get fail, and the
 * reader's `bad` flag says so). Ranks run the same program, so both sides agree on the
 * layout of each message; nothing here knows MPI.
 */
#ifndef IG_MPI_WIRE_H
#define IG_MPI_WIRE_H

#include <stddef.h>
#include <stdint.h>

/** A message being written. `p` is malloc'd and owned by the buffer (free with wire_free);
 *  `oom` is set when an append could not grow it (the message is then unusable). */
typedef struct wire {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wire;

void wire_u32(wire *w, uint32_t v);
void wire_u64(wire *w, uint64_t v);
void wire_f64(wire *w, double v);
/** Length (u64) then the bytes; p may be NULL when n is 0. */
void wire_bytes(wire *w, const void *p, size_t n);
/** A C string (NULL is written as the empty string). */
void wire_str(wire *w, const char *s);
void wire_free(wire *w);

/** A message being read: p[0, n) is the caller's and must outlive the reader. */
typedef struct wire_rd {
    const uint8_t *p;
    size_t n, at;
    int bad;   ///< set by the first get that ran past the end
} wire_rd;

uint32_t wire_get_u32(wire_rd *r);
uint64_t wire_get_u64(wire_rd *r);
double wire_get_f64(wire_rd *r);
/** Points *n bytes into the message (not copied); NULL with *n = 0 when bad. */
const uint8_t *wire_get_bytes(wire_rd *r, size_t *n);
/** A count that must be n (else `bad` is set), then n integers: m[i] becomes the larger of
 *  m[i] and the i-th (the parts' per-position maxima). Returns `bad`. */
int wire_get_max_u64s(wire_rd *r, uint64_t *m, size_t n);
/** A string written by wire_str, copied into a malloc'd NUL-terminated string (NULL when bad
 *  or out of memory: then `bad` is set too). */
char *wire_get_str(wire_rd *r);

#endif
