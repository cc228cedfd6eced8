/* queries: see queries.h. */
#include <stddef.h>
#include <string.h>

#include "infinigram/infinigram.h"
#include "queries.h"
#include "counts.h"
#include "explain.h"
#include "generate.h"
#include "mix.h"
#include "models.h"
#include "search.h"
#include "spans.h"

static const query_cmd queries[] = {
    {&ig_op_count, cmd_count},     {&ig_op_doc, cmd_doc},         {&ig_op_predict, cmd_predict},
    {&ig_op_prob, cmd_prob},       {&ig_op_backoff, cmd_backoff}, {&ig_op_generate, cmd_generate},
    {&ig_op_spans, cmd_spans},     {&ig_op_mix, cmd_mix},         {&ig_op_eval, cmd_eval},
    {&ig_op_explain, cmd_explain}, {&ig_op_search, cmd_search},
};

const query_cmd *query_find(const ig_op *op, const char *name)
{
    for (size_t i = 0; i < sizeof queries / sizeof *queries; i++)
        if ((op && queries[i].op == op) || (name && !strcmp(queries[i].op->name, name)))
            return &queries[i];
    return NULL;
}
