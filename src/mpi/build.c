/* build: see build.h. */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "infinigram/infinigram.h"
#include "build.h"
#include "cluster.h"
#include "command.h"
#include "parts.h"

/* The vote of a build: every rank's success flag, the minimum of which every rank gets. */
typedef struct vote {
    int voted;
} vote;

static int cast_vote(int ok, ig_error *err)
{
    int all = 0;
    MPI_Request rq;
    double limit = g.build_timeout;
    int rc = MPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g.comm, &rq);
    if (rc == MPI_SUCCESS)
        rc = wait_req(&rq, now() + limit);
    if (rc)
        return ig_error_set(err, IG_EIO, "the ranks could not agree on the build (%s)",
                            rc == -1 ? "no agreement before the build deadline" : "a rank cannot be reached");
    if (!all && ok)
        return ig_error_set(err, IG_ECANCELLED, "another rank's part failed: this part is abandoned, the "
                            "previous index stays in force");
    return all ? 0 : IG_ECANCELLED;
}

static int agree(void *user, const char *dir, const ig_build_result *res, ig_error *err)
{
    (void)dir;
    (void)res;
    vote *v = user;
    v->voted = 1;
    return cast_vote(1, err);
}

void do_build(wire_rd *q, wire *w)
{
    ig_error e = {0};
    char *name = wire_get_str(q);
    ig_build_options bo;
    ig_build_options_default(&bo);
    bo.jobs = (int)wire_get_u64(q);
    bo.memory = wire_get_u64(q);
    uint64_t shard = wire_get_u64(q);
    if (shard)
        bo.shard_size = shard;
    bo.part = (uint32_t)g.rank;
    bo.parts = (uint32_t)g.size;
    vote v = {0};
    ig_build_result res;
    memset(&res, 0, sizeof res);
    int rc = q->bad || !name ? ig_error_set(&e, IG_EINTERNAL, "garbled request") : need_catalog(&e);
    /* one rank alone builds the whole dataset: part 0 of 1 */
    if (!rc && g.size == 1)
        bo.parts = 0;
    if (!rc) {
        /* the index in force, if any, goes when the new one is switched in */
        ig_index_close(&g.idx);
        free(g.dataset);
        g.dataset = NULL;
        rc = ig_catalog_build_agreed(g.cat, name, &bo, NULL, NULL, NULL, agree, &v, &res, &e);
    }
    if (!v.voted) { /* failed before the vote: the others must still hear this rank's no */
        ig_error scratch;
        cast_vote(0, &scratch);
    }
    ig_dataset d;
    uint64_t sum = 0;
    memset(&d, 0, sizeof d);
    if (!rc && !(rc = ig_catalog_get(g.cat, name, &d, &e)))
        rc = ig_index_checksum(d.index_path, &sum, &e);
    reply_status(w, rc, &e);
    wire_str(w, d.index_path);
    wire_u64(w, res.bytes);
    wire_u64(w, res.documents);
    wire_u64(w, res.shards);
    wire_u64(w, sum);
    wire_f64(w, res.seconds);
    wire_str(w, g.home);
    if (d.name)
        ig_dataset_free(&d);
    ig_build_result_free(&res);
    free(name);
}

/* An option's value as a number within [min, max] (jobs) or, max 0, a size; *out untouched
 * when not given. The shell's words for the same mistakes. 0, or -1 reported. */
static int own_number(const ig_line *l, const char *name, long long min, long long max, uint64_t *out, double t0)
{
    const char *v = own_value(l, name);
    long long n = 0;
    ig_error e;
    int rc = !v ? 0 : max ? ig_option_int(name, v, min, max, &n, &e) : ig_option_size(name, v, out, &e);
    if (rc)
        return fail("build", rc, t0, "%s", e.msg);
    if (v && max)
        *out = (uint64_t)n;
    return 0;
}

int cmd_build(const words *ws, double t0)
{
    const char *cmd = "build";
    static const ig_option opts[] = {{"jobs", "N", NULL}, {"memory", "SIZE", NULL}, {"shard-size", "SIZE", NULL}, {NULL, NULL, NULL}};
    ig_line l;
    uint64_t jobs = 0, m = 0, s = 0;
    if (read_own(cmd, ws, opts, &l, t0) || own_number(&l, "jobs", 1, 64, &jobs, t0) ||
        own_number(&l, "memory", 0, 0, &m, t0) || own_number(&l, "shard-size", 0, 0, &s, t0)) {
        ig_line_free(&l);
        return -1;
    }
    if (l.nargs != 1) {
        size_t n = l.nargs;
        ig_line_free(&l);
        return fail(cmd, IG_EUSAGE, t0, "%s; usage: build NAME [--jobs N] [--memory SIZE] [--shard-size SIZE]",
                    n ? "unexpected argument" : "missing NAME");
    }
    char *name = strdup(l.args[0].text);
    ig_line_free(&l);
    if (!name)
        return fail(cmd, IG_ENOMEM, t0, "out of memory");
    wire q = {0};
    wire_u32(&q, OP_BUILD);
    wire_str(&q, name);
    wire_u64(&q, jobs);
    wire_u64(&q, m);
    wire_u64(&q, s);
    int was_loaded = g.loaded;
    REPLIES(rep, nrep);
    g.loaded = 0; /* each rank closes its part before building */
    building = 1;
    round_trip(&q, 0, g.size, g.build_timeout, rep, nrep);
    building = 0;
    wire_free(&q);
    int rc = report_failures(cmd, t0, rep, nrep, 0, g.size);
    cJSON *rec = rc ? NULL : cJSON_CreateObject(), *ranks = rec ? cJSON_AddArrayToObject(rec, "ranks") : NULL;
    uint64_t bytes = 0, docs = 0, shards = 0;
    for (int r = 0; !rc && r < g.size; r++) {
        wire_rd rd = reply_of(rep, nrep, r);
        char *path = wire_get_str(&rd);
        uint64_t b = wire_get_u64(&rd), d = wire_get_u64(&rd), sh = wire_get_u64(&rd), sum = wire_get_u64(&rd);
        (void)wire_get_f64(&rd);
        char *home = wire_get_str(&rd);
        cJSON *o = cJSON_CreateObject();
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, sum);
        if (o) {
            cJSON_AddNumberToObject(o, "rank", r);
            cJSON_AddStringToObject(o, "host", host_of(r));
            cJSON_AddStringToObject(o, "home", home ? home : "");
            cJSON_AddStringToObject(o, "index", path ? path : "");
            cJSON_AddNumberToObject(o, "bytes", (double)b);
            cJSON_AddNumberToObject(o, "documents", (double)d);
            cJSON_AddNumberToObject(o, "shards", (double)sh);
            cJSON_AddStringToObject(o, "checksum", hex);
            cJSON_AddItemToArray(ranks, o);
        }
        bytes += b;
        docs += d;
        shards += sh;
        free(path);
        free(home);
    }
    if (!rc) {
        cJSON_AddNumberToObject(rec, "parts", g.size);
        char *text = cJSON_PrintUnformatted(rec), key[128];
        ig_error e;
        snprintf(key, sizeof key, "cluster.%s", name);
        if (!text)
            rc = fail(cmd, IG_ENOMEM, t0, "out of memory recording the parts");
        else if (ig_catalog_setting_set(g.cat, key, text, &e))
            rc = fail(cmd, e.code, t0, "the parts are built but rank 0 cannot record them: %s", e.msg);
        free(text);
    }
    if (!rc) {
        char members[512];
        snprintf(members, sizeof members,
                 "\"dataset\":\"%s\",\"parts\":%d,\"bytes\":%" PRIu64 ",\"documents\":%" PRIu64 ",\"shards\":%" PRIu64,
                 name, g.size, bytes, docs, shards);
        emit(cmd, members, t0);
    }
    cJSON_Delete(rec);
    free_replies(rep);
    /* the ranks closed their parts to build: the loaded dataset is reopened, so that queries
     * see a rebuilt one's new parts, and a failed build or one of another dataset leaves the
     * loaded one in force, as in the shell */
    if (g.current && (was_loaded || !strcmp(g.current, name))) {
        char *cur = strdup(g.current); /* cmd_load replaces g.current */
        if (cur)
            cmd_load(cur, 1, now());
        free(cur);
    }
    free(name);
    return rc;
}
