// libFuzzer target: bytes -> lesson_parse -> (when accepted and small) the
// forward pass. Any crash, sanitizer report, leak or allocation over the
// documented limits is a finding. Build and run: make fuzz FUZZ_SECONDS=60.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attention.h"
#include "lesson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Lesson ls;
    char err[LESSON_ERR_MAX];
    if (!lesson_parse(&ls, "fuzz.json", (const char *)data, size, err, sizeof err)) {
        // every rejection is one non-empty line that names the input
        if (strncmp(err, "fuzz.json: ", 11) != 0 || strchr(err, '\n')) __builtin_trap();
        return 0;
    }
    // forward pass for small accepted lessons (big ones are valid but slow to fuzz)
    size_t work = (size_t)ls.batch * (size_t)ls.cfg.n_heads * (size_t)ls.len_q * (size_t)ls.len_k *
                  (size_t)(ls.cfg.d_k + ls.cfg.d_v + ls.cfg.d_model);
    if (work < (1u << 20)) {
        Trace tr;
        trace_init(&tr);
        if (!attn_forward(&ls.cfg, &ls.w, &ls.in, &tr)) __builtin_trap();
        trace_free(&tr);
    }
    lesson_free(&ls);
    return 0;
}
