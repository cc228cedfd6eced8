/* serve — the shell's face of the HTTP server (src/serve/): options, then srv_run. */
#include <stdlib.h>
#include <unistd.h>

#include "../serve/server.h"
#include "shell.h"

int cmd_serve(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 0, 0, "serve [--host 127.0.0.1] [--port N] [--threads N] [--datasets a,b]"))
        return SH_ERR;
    long long port = 8080, threads = 0, limit = 1 << 20, timeout = 30, deadline = 300;
    if (sh_opt_int(sh, a, "port", 0, 65535, &port) || sh_opt_int(sh, a, "threads", 0, 256, &threads) ||
        sh_opt_int(sh, a, "body-limit", 1024, 1LL << 30, &limit) || sh_opt_int(sh, a, "timeout", 1, 3600, &timeout) ||
        sh_opt_int(sh, a, "deadline", 1, 86400, &deadline))
        return SH_ERR;
    sh_optval *h = sh_opt_get(a, "host"), *ds = sh_opt_get(a, "datasets"), *dm = sh_opt_get(a, "dups-memory");
    uint64_t dups_memory;
    if (dm && (ig_parse_size(dm->value.text, &dups_memory) || !dups_memory))
        return sh_fail_at(sh, a, dm->value.col, "usage", "--dups-memory: \"%s\" is not a size (e.g. 4G, 512M)",
                          dm->value.text);
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? n : 2;
    }
    const char **kv = calloc(2 * sh_nsettings + 4, sizeof *kv);
    if (!kv)
        return sh_fail(sh, a, "internal", "out of memory");
    size_t k = 0;
    /* the server starts from the defaults, as scripts do: :set in this session applies, and the
     * saved values only when the program was started with --saved-settings (an interactive
     * session holds them otherwise too); a setting never set is left to the operations */
    for (size_t i = 0; i < sh_nsettings && sh->settings; i++)
        if (sh->settings[i] && (sh->saved_asked || (sh->set_here >> i & 1))) {
            kv[k++] = sh_settings[i].key;
            kv[k++] = sh->settings[i];
        }
    if (dm) { /* dups' memory budget: a default no request can change (the field is the shell's) */
        kv[k++] = "memory";
        kv[k++] = dm->value.text;
    }
    srv_config cfg = {.cat = sh->cat, .host = h ? h->value.text : "127.0.0.1", .port = (unsigned)port,
                      .threads = (unsigned)threads, .timeout = (unsigned)timeout, .deadline = (unsigned)deadline,
                      .datasets = ds ? ds->value.text : NULL, .body_limit = (size_t)limit,
                      .fake_clock = sh->fake_clock, .log = sh->err, .settings = kv};
    int rc = srv_run(&cfg) ? SH_ERR : SH_OK;
    free(kv);
    return rc;
}
