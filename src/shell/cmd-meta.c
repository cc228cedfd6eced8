/*
 * Meta-commands about the session itself: settings (:set, :show and the :timer and
 * :format shortcuts), :help and :quit. Settings are rows of one table (key, default,
 * help, validator) persisted in the catalog and read once into the session: interactive
 * sessions start from the saved values, scripts (-c, -f, piped input) and the server from
 * the defaults, so that they print the same on every machine, unless --saved-settings
 * asks for the saved values (as psql's -X and sqlite3's -init choose an rc file). Settings
 * named like an operation's field (width, max-context) are that field's default.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shell.h"

static int check_onoff(const char *v, char *why, size_t n)
{
    if (!strcmp(v, "on") || !strcmp(v, "off"))
        return 0;
    snprintf(why, n, "expected on or off");
    return -1;
}

static int check_format(const char *v, char *why, size_t n)
{
    if (!strcmp(v, "table") || !strcmp(v, "json"))
        return 0;
    snprintf(why, n, "expected table or json");
    return -1;
}

static int check_color(const char *v, char *why, size_t n)
{
    if (!strcmp(v, "auto") || !strcmp(v, "on") || !strcmp(v, "off"))
        return 0;
    snprintf(why, n, "expected auto, on or off");
    return -1;
}

static int check_width(const char *v, char *why, size_t n)
{
    char *end;
    long w = strtol(v, &end, 10);
    if (*v && !*end && w >= 0 && w <= 10000)
        return 0;
    snprintf(why, n, "expected an integer from 0 to 10000");
    return -1;
}

static int check_context(const char *v, char *why, size_t n)
{
    char *end;
    if (!strcmp(v, "none"))
        return 0;
    long long x = strtoll(v, &end, 10);
    if (*v && !*end && x >= 0)
        return 0;
    snprintf(why, n, "expected a number of bytes, or none");
    return -1;
}

static int check_size(const char *v, char *why, size_t n)
{
    uint64_t s;
    if (!sh_parse_size(v, &s))
        return 0;
    snprintf(why, n, "expected a size such as 64M or 1G");
    return -1;
}

const sh_setting sh_settings[] = {
    {"format", "table", "output format: table or json", "table|json", check_format},
    {"timer", "off", "print the engine time after each command: on or off", "on|off", check_onoff},
    {"color", "auto", "colour: auto (terminal only, honours NO_COLOR), on, off", "auto|on|off", check_color},
    {"width", "30", "bytes of context on each side of snippets", NULL, check_width},
    {"shard-size", "1G", "default shard size for build", NULL, check_size},
    {"max-context", "none", "bytes of context models use (none: each command's own default: all, or 100 for eval)", NULL, check_context},
};
const size_t sh_nsettings = sizeof sh_settings / sizeof sh_settings[0];

const sh_setting *sh_setting_find(const char *key)
{
    for (size_t i = 0; i < sh_nsettings; i++)
        if (!strcmp(sh_settings[i].key, key))
            return &sh_settings[i];
    return NULL;
}

char *sh_setting_value(shell *sh, const char *key)
{
    const sh_setting *s = sh_setting_find(key);
    if (!s)
        return strdup("");
    size_t i = (size_t)(s - sh_settings);
    return strdup(sh->settings && sh->settings[i] ? sh->settings[i] : s->def);
}

static int session_set(shell *sh, const sh_setting *s, const char *v)
{
    char *copy = strdup(v);
    if (!copy)
        return -1;
    size_t i = (size_t)(s - sh_settings);
    free(sh->settings[i]);
    sh->settings[i] = copy;
    sh_setting_apply(sh, s->key, v);
    return 0;
}

int sh_settings_init(shell *sh, int use_saved)
{
    if (!(sh->settings = calloc(sh_nsettings, sizeof *sh->settings)))
        return -1;
    for (size_t i = 0; i < sh_nsettings; i++) {
        char *v = NULL, why[64];
        ig_error e;
        if (!use_saved || !sh->cat || ig_catalog_setting_get(sh->cat, sh_settings[i].key, &v, &e) || !v ||
            sh_settings[i].check(v, why, sizeof why)) {
            free(v);
            v = NULL;
        }
        /* a setting never set stays NULL: the operations keep their own defaults */
        int rc = v ? session_set(sh, &sh_settings[i], v) : sh_setting_apply(sh, sh_settings[i].key, sh_settings[i].def);
        free(v);
        if (rc)
            return -1;
    }
    return 0;
}

void sh_settings_free(shell *sh)
{
    for (size_t i = 0; sh->settings && i < sh_nsettings; i++)
        free(sh->settings[i]);
    free(sh->settings);
    sh->settings = NULL;
}

int sh_setting_apply(shell *sh, const char *key, const char *v)
{
    if (!strcmp(key, "format"))
        sh->json = !strcmp(v, "json");
    else if (!strcmp(key, "timer"))
        sh->timer = !strcmp(v, "on");
    else if (!strcmp(key, "color")) {
        /* no-color.org: NO_COLOR counts only when set to a non-empty value */
        const char *nc = getenv("NO_COLOR");
        int allowed = !(nc && *nc);
        sh->color = !strcmp(v, "on") || (!strcmp(v, "auto") && allowed && isatty(STDOUT_FILENO));
        sh->err_color = !strcmp(v, "on") || (!strcmp(v, "auto") && allowed && isatty(STDERR_FILENO));
    }
    return 0;
}

static int set_value(shell *sh, sh_args *a, const char *key, size_t keycol, const char *value, size_t valcol)
{
    const sh_setting *s = sh_setting_find(key);
    if (!s)
        return sh_fail_at(sh, a, keycol, "usage", "unknown setting \"%s\" (see :show)", key);
    char why[128];
    if (s->check(value, why, sizeof why))
        return sh_fail_at(sh, a, valcol, "usage", "%s: %s", key, why);
    ig_error e;
    if (ig_catalog_setting_set(sh->cat, key, value, &e))
        return sh_fail_ig(sh, a, &e);
    if (session_set(sh, s, value))
        return sh_fail(sh, a, "internal", "out of memory");
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a);
        cJSON_AddStringToObject(o, "key", key);
        cJSON_AddStringToObject(o, "value", value);
        sh_json_emit(sh, o);
    } else {
        sh_printf(sh, "%s = %s\n", key, value);
    }
    return SH_OK;
}

int cmd_set(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 2, 2, ":set KEY VALUE"))
        return SH_ERR;
    return set_value(sh, a, a->words[0].text, a->words[0].col, a->words[1].text, a->words[1].col);
}

int cmd_timer(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 1, 1, ":timer on|off"))
        return SH_ERR;
    return set_value(sh, a, "timer", a->words[0].col, a->words[0].text, a->words[0].col);
}

int cmd_format(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 1, 1, ":format table|json"))
        return SH_ERR;
    return set_value(sh, a, "format", a->words[0].col, a->words[0].text, a->words[0].col);
}

int cmd_show(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 0, 1, ":show [KEY]"))
        return SH_ERR;
    const char *only = a->nwords ? a->words[0].text : NULL;
    if (only && !sh_setting_find(only))
        return sh_fail_at(sh, a, a->words[0].col, "usage", "unknown setting \"%s\"", only);
    cJSON *o = sh->json ? sh_json_new(sh, a) : NULL, *set = o ? cJSON_AddObjectToObject(o, "settings") : NULL;
    cJSON *saved = NULL;
    for (size_t i = 0; i < sh_nsettings; i++) {
        const sh_setting *s = &sh_settings[i];
        if (only && strcmp(only, s->key))
            continue;
        char *v = sh_setting_value(sh, s->key), *sv = NULL;
        ig_error e;
        /* a saved value this session does not use (a script, or changed since) is shown beside */
        if (sh->cat && ig_catalog_setting_get(sh->cat, s->key, &sv, &e) == 0 && sv && v && !strcmp(sv, v)) {
            free(sv);
            sv = NULL;
        }
        if (o) {
            cJSON_AddStringToObject(set, s->key, v ? v : "");
            if (sv)
                cJSON_AddStringToObject(saved ? saved : (saved = cJSON_CreateObject()), s->key, sv);
        } else {
            sh_printf(sh, "%-11s %-7s %s%s%s", s->key, v ? v : "", sh_c(sh, SH_DIM), s->help, sh_c(sh, SH_RESET));
            if (sv)
                sh_printf(sh, " [saved: %s]", sv);
            sh_puts(sh, "\n");
        }
        free(v);
        free(sv);
    }
    if (o) {
        if (saved)
            cJSON_AddItemToObject(o, "saved", saved);
        sh_json_emit(sh, o);
    }
    return SH_OK;
}

int cmd_help(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 0, 1, ":help [COMMAND]"))
        return SH_ERR;
    if (a->nwords) {
        const char *w = a->words[0].text;
        const sh_cmd *c = sh_find_cmd(sh, w, NULL);
        if (!c && w[0] != ':') {
            char *colon = malloc(strlen(w) + 2);
            sprintf(colon, ":%s", w);
            c = sh_find_cmd(sh, colon, NULL);
            free(colon);
        }
        if (!c)
            return sh_fail_at(sh, a, a->words[0].col, "not_found", "no such command \"%s\"", w);
        if (sh->json) {
            cJSON *o = sh_json_new(sh, a);
            cJSON_AddStringToObject(o, "name", c->name);
            cJSON_AddStringToObject(o, "usage", c->args);
            cJSON_AddStringToObject(o, "summary", c->summary);
            cJSON_AddStringToObject(o, "help", c->help);
            sh_json_emit(sh, o);
        } else {
            sh_print_usage(sh, c, sh->out);
        }
        return SH_OK;
    }
    if (sh->json) {
        cJSON *o = sh_json_new(sh, a), *arr = cJSON_AddArrayToObject(o, "commands");
        for (size_t i = 0; i < sh_ncmds; i++) {
            cJSON *c = cJSON_CreateObject();
            cJSON_AddStringToObject(c, "name", sh_cmds[i].name);
            cJSON_AddStringToObject(c, "usage", sh_cmds[i].args);
            cJSON_AddStringToObject(c, "summary", sh_cmds[i].summary);
            cJSON_AddItemToArray(arr, c);
        }
        sh_json_emit(sh, o);
        return SH_OK;
    }
    sh_puts(sh, "Commands (\":help NAME\" for details; unique prefixes work):\n");
    for (size_t i = 0; i < sh_ncmds; i++)
        sh_printf(sh, "  %s%-9s%s %s\n", sh_c(sh, SH_BOLD), sh_cmds[i].name, sh_c(sh, SH_RESET), sh_cmds[i].summary);
    sh_puts(sh, "Text arguments: \"quoted\" with \\n \\t \\\\ \\\" \\xHH escapes, or plain words joined by spaces.\n");
    return SH_OK;
}

int cmd_quit(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 0, 0, ":quit"))
        return SH_ERR;
    if (sh->json)
        sh_json_emit(sh, sh_json_new(sh, a));
    return SH_EXIT;
}
