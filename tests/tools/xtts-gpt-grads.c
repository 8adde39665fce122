/* xtts-gpt-grads IN OUT — XTTS's GPT (train/xtts_gpt.h) on a golden file's weights and batch
 * (version 1 or 2 of tests/golden/make_xtts_gpt_golden.py's layout): writes OUT, little-endian:
 * b"XGPR", float64 eval text and mel loss, train text and mel loss, forward+backward seconds,
 * then every tensor's gradient of 0.01 text + 1.0 mel (the golden's weights) as float32 in
 * Coqui's layout and the golden's tensor order. For tests/golden/check_xtts_gpt_full.py, which
 * compares them with Coqui's at XTTS-v2's size. Test helper, not installed. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/xtts_gpt_golden.h"
#include "train/xtts_gpt.h"

static int run(const golden *g, FILE *out, const char *in) {
    xtts_gpt_config c;
    xtts_test_golden_config(g, &c);
    xtts_gpt *m = NULL;
    xtts_error err = {0};
    if (xtts_gpt_new(&c, &m, &err)) return fprintf(stderr, "xtts-gpt-grads: %s\n", err.msg), 2;
    size_t off = 0;
    for (int i = 0; i < g->nt; i++) {
        long k = xtts_gpt_find_tensor(m, g->names[i]);
        if (k < 0 || xtts_gpt_tensor_at(m, (size_t)k)->numel != g->numel[i]) {
            fprintf(stderr, "xtts-gpt-grads: %s: tensor %s does not fit the model\n", in, g->names[i]);
            xtts_gpt_delete(m);
            return 2;
        }
        xtts_gpt_set_tensor(m, (size_t)k, g->init + off);
        off += g->numel[i];
    }
    float lt[2], lm[2];
    xtts_gpt_batch ev = xtts_test_golden_batch(g, 0), tr = xtts_test_golden_batch(g, 1);
    double t0 = xtts_now_s();
    int rc = 0;
    if (xtts_gpt_forward(m, &ev, &lt[0], &lm[0], &err) || (t0 = xtts_now_s(), 0) ||
        xtts_gpt_forward(m, &tr, &lt[1], &lm[1], &err)) {
        fprintf(stderr, "xtts-gpt-grads: %s\n", err.msg);
        rc = 2;
    }
    if (!rc) {
        xtts_gpt_zero_grad(m);
        xtts_gpt_backward(m, (float)g->opt[5], (float)g->opt[6]);
        double v[5] = {lt[0], lm[0], lt[1], lm[1], xtts_now_s() - t0};
        float *buf = malloc(xtts_gpt_num_params(m) * sizeof(float));
        rc = !buf || fwrite("XGPR", 1, 4, out) != 4 || fwrite(v, 8, 5, out) != 5;
        for (int i = 0; !rc && i < g->nt; i++) {
            xtts_gpt_get_tensor(m, (size_t)xtts_gpt_find_tensor(m, g->names[i]), 1, buf);
            rc = fwrite(buf, 4, g->numel[i], out) != g->numel[i];
        }
        free(buf);
        if (rc) fprintf(stderr, "xtts-gpt-grads: cannot write the output\n"), rc = 2;
    }
    xtts_gpt_delete(m);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 3) return fprintf(stderr, "usage: xtts-gpt-grads IN.bin OUT.bin\n"), 1;
    golden g;
    if (xtts_test_golden_load(argv[1], &g)) return fprintf(stderr, "xtts-gpt-grads: %s: unreadable\n", argv[1]), 2;
    FILE *out = fopen(argv[2], "wb");
    if (!out) return fprintf(stderr, "xtts-gpt-grads: %s: cannot write\n", argv[2]), 2;
    int rc = run(&g, out, argv[1]);
    if (fclose(out) && !rc) rc = 2;
    xtts_test_golden_free(&g);
    return rc;
}
