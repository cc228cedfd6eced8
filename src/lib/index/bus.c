/*
 * Index files cut short under their mappings. The files of an index are mapped, and a read of
 * a mapped page past the end of a file that another program truncated (or rewrote in place,
 * as `cp` over a home being restored does) raises SIGBUS, which would kill the shell or the
 * server. Each mapping of an index file is registered here with the health record of its
 * index; a SIGBUS inside one replaces the missing page with a page of zeros, so that the read
 * goes on, and records the corruption, so that the query that read it fails with the
 * corruption error instead of answering (every operation checks its index's health before
 * it answers). A fault outside every registered mapping goes to the handler the program had
 * before, or kills the process as it would have.
 *
 * The handler reads the registry without a lock: a slot's fields are written before its
 * address is published (release) and read after it (acquire); a slot is unpublished before its
 * mapping goes away.
 */
#include "index_impl.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Slots a block: the first block is static (about 600 shards of byte indexes open at once);
 * more blocks are chained on as mappings need them, and kept (the handler may be walking them),
 * so the registry holds as many mappings as the process ever had open at once. */
#define BUS_SLOTS 8192

typedef struct bus_slot {
    _Atomic uintptr_t addr; ///< 0: free
    size_t len;
    ig_health *health;
    char label[64];         ///< the file, as the health record names it ("shard-0000/sa")
} bus_slot;

typedef struct bus_block {
    bus_slot slots[BUS_SLOTS];
    _Atomic(struct bus_block *) next; ///< published once filled in, never taken back
} bus_block;

static bus_block first;
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t installed = PTHREAD_ONCE_INIT;
static struct sigaction previous;
static long page_size;

/* Async-signal-safe appending of a string to dst[0..cap). */
static size_t put(char *dst, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        dst[at++] = *s++;
    dst[at] = '\0';
    return at;
}

/* The registered mapping holding address a, or NULL (async-signal-safe: no lock). */
static bus_slot *slot_of(uintptr_t a)
{
    for (bus_block *b = &first; b; b = atomic_load_explicit(&b->next, memory_order_acquire))
        for (size_t i = 0; i < BUS_SLOTS; i++) {
            uintptr_t base = atomic_load_explicit(&b->slots[i].addr, memory_order_acquire);
            if (base && a >= base && a - base < b->slots[i].len)
                return &b->slots[i];
        }
    return NULL;
}

static void on_bus(int sig, siginfo_t *si, void *uc)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    bus_slot *slot = slot_of(a);
    void *page = (void *)(a & ~((uintptr_t)page_size - 1));
    if (slot && mmap(page, (size_t)page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
        ig_health *h = slot->health;
        int expect = 0;
        if (h && atomic_compare_exchange_strong(&h->state, &expect, 1)) {
            size_t n = put(h->what, 0, sizeof h->what, slot->label);
            put(h->what, n, sizeof h->what,
                ": cut short while it was read (another program truncated the file or rewrote it in place)");
            atomic_store_explicit(&h->state, 2, memory_order_release);
        }
        return; /* the read is made again, of zeros */
    }
    /* not an index file's: what the program would have done without us */
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(sig, si, uc);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler) {
        previous.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL); /* the faulting read runs again and ends the process */
    }
}

static void install(void)
{
    page_size = sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &previous) != 0)
        memset(&previous, 0, sizeof previous);
}

void igi_bus_watch(const ig_map *m, ig_health *h, const char *path)
{
    if (!m->addr || !m->len)
        return;
    pthread_once(&installed, install);
    /* the label is the path's last two parts: the shard's folder and the file */
    const char *label = path + strlen(path);
    for (int parts = 0; label > path; label--)
        if (label[-1] == '/' && ++parts == 2)
            break;
    pthread_mutex_lock(&slots_mu);
    bus_slot *free_slot = NULL;
    for (bus_block *b = &first; b && !free_slot;) {
        for (size_t i = 0; i < BUS_SLOTS && !free_slot; i++)
            if (!atomic_load_explicit(&b->slots[i].addr, memory_order_relaxed))
                free_slot = &b->slots[i];
        bus_block *next = atomic_load_explicit(&b->next, memory_order_relaxed);
        if (!free_slot && !next) { /* a zeroed block, published before any of its slots is */
            next = calloc(1, sizeof *next);
            if (next)
                atomic_store_explicit(&b->next, next, memory_order_release);
        }
        b = next; /* NULL when memory ran out: this mapping goes unwatched */
    }
    if (free_slot) {
        free_slot->len = m->len;
        free_slot->health = h;
        size_t n = strlen(label);
        if (n >= sizeof free_slot->label)
            label += n - (sizeof free_slot->label - 1);
        memcpy(free_slot->label, label, strlen(label) + 1);
        atomic_store_explicit(&free_slot->addr, (uintptr_t)m->addr, memory_order_release);
    }
    pthread_mutex_unlock(&slots_mu);
}

void igi_map_release(ig_map *m)
{
    if (!m->addr)
        return;
    pthread_mutex_lock(&slots_mu);
    int found = 0;
    for (bus_block *b = &first; b && !found; b = atomic_load_explicit(&b->next, memory_order_relaxed))
        for (size_t i = 0; i < BUS_SLOTS && !found; i++)
            if (atomic_load_explicit(&b->slots[i].addr, memory_order_relaxed) == (uintptr_t)m->addr) {
                atomic_store_explicit(&b->slots[i].addr, 0, memory_order_release);
                found = 1;
            }
    pthread_mutex_unlock(&slots_mu);
    munmap(m->addr, m->len);
    m->addr = NULL;
    m->len = 0;
}
