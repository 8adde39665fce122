/* ids.c — the token-id buffer (ids.h). */
#include "prep/text/tokenizer/ids.h"

#include <stdlib.h>

int xtts_ids_push(xtts_ids *v, int32_t id) {
    if (v->n == v->cap) {
        size_t c = v->cap ? v->cap * 2 : 256;
        int32_t *n = realloc(v->ids, c * sizeof *n);
        if (!n) return -1;
        v->ids = n;
        v->cap = c;
    }
    v->ids[v->n++] = id;
    return 0;
}
