/* The engine operations, for faces that dispatch by name (the server, help). */
#include <string.h>

#include "infinigram/contam.h"
#include "infinigram/generate.h"
#include "infinigram/explain.h"
#include "infinigram/model.h"
#include "infinigram/query.h"
#include "infinigram/dups.h"
#include "infinigram/tokens.h"
#include "op_impl.h"

static const ig_op *const ops[] = {
    &ig_op_count,
    &ig_op_predict,
    &ig_op_prob,
    &ig_op_backoff,
    &ig_op_eval,
    &ig_op_explain,
    &ig_op_spans,
    &ig_op_search,
    &ig_op_doc,
    &ig_op_generate,
    &ig_op_mix,
    &ig_op_contam,
    &ig_op_dups,
    NULL,
};

const ig_op *const *ig_ops(void) { return ops; }

const ig_op *ig_op_find(const char *name)
{
    for (size_t i = 0; ops[i]; i++)
        if (!strcmp(ops[i]->name, name))
            return ops[i];
    return NULL;
}
