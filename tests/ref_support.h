// ref_support.h — attnviz's tensors against a PyTorch reference's (tests/ref/*.json, written by
// the gen_*.py scripts): the tests that read them share the tolerance and the comparison.
// Include after cmocka.h.
#ifndef ATTNVIZ_REF_SUPPORT_H
#define ATTNVIZ_REF_SUPPORT_H

#include <cjson/cJSON.h>
#include <math.h>

#include "file_support.h"
#include "tensor.h"

// |C − torch| ≤ REF_ATOL + REF_RTOL·|torch| (float32; the forward's tolerance)
#define REF_ATOL 1e-5
#define REF_RTOL 1e-4

// The worst value met: |C − torch| and the same in tolerances.
typedef struct RefWorst {
    double abs, rel;
} RefWorst;

static inline cJSON *ref_read_json(const char *path)
{
    char *text = NULL;
    assert_true(slurp(path, &text) > 0);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    return root;
}

// 1 when got is outside the tolerance of want (and w keeps the worst), else 0.
static inline int ref_check(double got, double want, RefWorst *w)
{
    const double e = fabs(got - want);
    w->abs = fmax(w->abs, e);
    w->rel = fmax(w->rel, e / (REF_ATOL + REF_RTOL * fabs(want)));
    return !(e <= REF_ATOL + REF_RTOL * fabs(want));
}

// Each {"name", "shape", "data"} of list against lookup(ctx, name) (NULL: attnviz has none,
// one error): the values within the tolerance, the first 5 misses of a tensor printed with
// `where`. Returns the misses; *n: the reference's tensors.
static inline int ref_compare_list(const cJSON *list, const Tensor *(*lookup)(void *ctx, const char *name), void *ctx,
                                   const char *where, int *n, RefWorst *w)
{
    int bad = 0;
    const cJSON *item, *v;
    *n = 0;
    cJSON_ArrayForEach(item, list)
    {
        const char *name = cJSON_GetObjectItem(item, "name")->valuestring;
        const Tensor *t = lookup(ctx, name);
        ++*n;
        if (!t) {
            print_error("%s: %s: torch has it, attnviz not\n", where, name);
            bad++;
            continue;
        }
        const cJSON *data = cJSON_GetObjectItem(item, "data");
        assert_int_equal((size_t)cJSON_GetArraySize(data), t->size);
        size_t i = 0;
        int shown = 0;
        cJSON_ArrayForEach(v, data)
        {
            if (ref_check((double)t->data[i], v->valuedouble, w)) {
                if (shown++ < 5) print_error("%s: %s[%zu] = %.9g, torch %.9g\n", where, name, i, (double)t->data[i], v->valuedouble);
                bad++;
            }
            i++;
        }
    }
    return bad;
}

#endif
