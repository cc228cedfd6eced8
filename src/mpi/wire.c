/*
 * Message encoding for infinigram-mpi (wire.h).
 */
#include "wire.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

static void put(wire *w, const void *p, size_t n)
{
    if (w->oom)
        return;
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->n + n)
            cap *= 2;
        uint8_t *q = realloc(w->p, cap);
        if (!q) {
            w->oom = 1;
            return;
        }
        w->p = q;
        w->cap = cap;
    }
    if (n)
        memcpy(w->p + w->n, p, n);
    w->n += n;
}

void wire_u32(wire *w, uint32_t v)
{
    v = htole32(v);
    put(w, &v, 4);
}

void wire_u64(wire *w, uint64_t v)
{
    v = htole64(v);
    put(w, &v, 8);
}

void wire_f64(wire *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    wire_u64(w, u);
}

void wire_bytes(wire *w, const void *p, size_t n)
{
    wire_u64(w, n);
    put(w, p, n);
}

void wire_str(wire *w, const char *s) { wire_bytes(w, s, s ? strlen(s) : 0); }

void wire_free(wire *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}

static const uint8_t *take(wire_rd *r, size_t n)
{
    if (r->bad || n > r->n - r->at) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p + r->at;
    r->at += n;
    return p;
}

/* The next n-byte little-endian integer (n ≤ 8); 0 when the message has fewer bytes left. */
static uint64_t get_le(wire_rd *r, size_t n)
{
    const uint8_t *p = take(r, n);
    uint64_t v = 0;
    for (size_t i = 0; p && i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint32_t wire_get_u32(wire_rd *r) { return (uint32_t)get_le(r, 4); }

uint64_t wire_get_u64(wire_rd *r) { return get_le(r, 8); }

double wire_get_f64(wire_rd *r)
{
    uint64_t u = wire_get_u64(r);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

int wire_get_max_u64s(wire_rd *r, uint64_t *m, size_t n)
{
    if (wire_get_u64(r) != n)
        r->bad = 1;
    for (size_t i = 0; !r->bad && i < n; i++) {
        uint64_t v = wire_get_u64(r);
        if (v > m[i])
            m[i] = v;
    }
    return r->bad;
}

const uint8_t *wire_get_bytes(wire_rd *r, size_t *n)
{
    uint64_t len = wire_get_u64(r);
    const uint8_t *p = r->bad ? NULL : take(r, (size_t)len);
    *n = p ? (size_t)len : 0;
    return p;
}

char *wire_get_str(wire_rd *r)
{
    size_t n;
    const uint8_t *p = wire_get_bytes(r, &n);
    char *s = r->bad ? NULL : malloc(n + 1);
    if (!s) {
        r->bad = 1;
        return NULL;
    }
    memcpy(s, p ? (const void *)p : "", n);
    s[n] = '\0';
    return s;
}
