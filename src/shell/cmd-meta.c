/*
 * Meta-commands about the session itself: :set, :show and the :timer and :format
 * shortcuts (the settings themselves live in settings.c), :help and :quit.
 */
#include <stdlib.h>
#include <string.h>

#include "shell.h"

static const char *setting_hint(const char *key, char *buf, size_t size)
{
    sh_near near;
    sh_near_init(&near, key, strlen(key));
    for (size_t i = 0; i < sh_nsettings; i++)
        sh_near_add(&near, sh_settings[i].key);
    return sh_near_hint(&near, NULL, buf, size);
}

/* :set saves the value for later sessions as well; the :timer and :format shortcuts change
 * this session only, as --json does (and as sqlite3's .timer and .mode, psql's \timing). */
static int set_value(shell *sh, sh_args *a, const char *key, size_t keycol, const char *value, size_t valcol, int save)
{
    const sh_setting *s = sh_setting_find(key);
    if (!s) {
        char hint[96];
        return sh_fail_at(sh, a, keycol, "usage", "unknown setting \"%s\"%s (see :show)", key, setting_hint(key, hint, sizeof hint));
    }
    char why[128];
    if (s->check(value, why, sizeof why))
        return sh_fail_at(sh, a, valcol, "usage", "%s: %s", key, why);
    ig_error e;
    if (!save)
        ;
    else if (ig_catalog_readonly(sh->cat)) /* still useful for this session */
        sh_warn(sh, "%s applies to this session only: the catalog is read-only (%s)", key, ig_catalog_readonly(sh->cat));
    else if (ig_catalog_setting_set(sh->cat, key, value, &e))
        return sh_fail_ig(sh, a, &e);
    if (sh_setting_session_set(sh, s, value))
        return sh_fail(sh, a, "internal", "out of memory");
    if (save) /* :set; :timer and :format are this session's own */
        sh->set_here |= (uint32_t)1 << (s - sh_settings);
    if (sh->json)
        sh_json_strings(sh, a, "key", key, "value", value, NULL);
    else
        sh_printf(sh, "%s = %s\n", key, value);
    return SH_OK;
}

int cmd_set(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 2, 2, ":set KEY VALUE"))
        return SH_ERR;
    return set_value(sh, a, a->words[0].text, a->words[0].col, a->words[1].text, a->words[1].col, 1);
}

int cmd_timer(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 1, 1, ":timer on|off"))
        return SH_ERR;
    return set_value(sh, a, "timer", a->words[0].col, a->words[0].text, a->words[0].col, 0);
}

int cmd_format(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 1, 1, ":format table|json"))
        return SH_ERR;
    return set_value(sh, a, "format", a->words[0].col, a->words[0].text, a->words[0].col, 0);
}

int cmd_show(shell *sh, sh_args *a)
{
    if (sh_need_words(sh, a, 0, 1, ":show [KEY]"))
        return SH_ERR;
    const char *only = a->nwords ? a->words[0].text : NULL;
    if (only && !sh_setting_find(only)) {
        char hint[96];
        return sh_fail_at(sh, a, a->words[0].col, "usage", "unknown setting \"%s\"%s", only,
                          setting_hint(only, hint, sizeof hint));
    }
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

int sh_show_help(shell *sh, sh_args *a, const sh_cmd *c)
{
    if (sh->json)
        sh_json_strings(sh, a, "name", c->name, "usage", c->args, "summary", c->summary, "help", c->help, NULL);
    else
        sh_print_usage(sh, c, sh->out);
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
        if (!c) { /* ambiguous, or nothing near: say which */
            sh_near near;
            sh_near_init(&near, w, strlen(w));
            char list[512] = "", hint[96];
            for (size_t i = 0; i < sh_ncmds; i++) {
                const char *name = sh_cmds[i].name, *bare = name[0] == ':' && w[0] != ':' ? name + 1 : name;
                sh_near_add(&near, bare);
                if (w[0] && !strncmp(bare, w, strlen(w)) && strlen(list) + strlen(name) + 3 < sizeof list) {
                    strcat(list, list[0] ? ", " : "");
                    strcat(list, name);
                }
            }
            if (strchr(list, ','))
                return sh_fail_at(sh, a, a->words[0].col, "usage", "ambiguous command \"%s\", could be: %s", w, list);
            return sh_fail_at(sh, a, a->words[0].col, "not_found", "no such command \"%s\"%s", w,
                              sh_near_hint(&near, NULL, hint, sizeof hint));
        }
        return sh_show_help(sh, a, c);
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
