/* cpu/crossentropy.h — cross-entropy of logits against class targets with ignored rows, as
 * F.cross_entropy(logits, targets, ignore_index=-1) with the mean over kept rows: the XTTS GPT's
 * text and mel losses, with their gradient. Softmax and the loss in double per row (libm's exp
 * and log, the same in every copy); the rows' terms added in row order.
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define row_lse LOOPS_NAME(row_lse)
#define crossentropy_forward_backward LOOPS_NAME(crossentropy_forward_backward)

/* largest logit of a row and log(sum(exp(z - max))) */
static double row_lse(const float *z, int V, float *mx_out) {
    float mx = z[0];
    for (int j = 1; j < V; j++) mx = z[j] > mx ? z[j] : mx;
    double s = 0.0;
    for (int j = 0; j < V; j++) s += exp((double)z[j] - mx);
    *mx_out = mx;
    return log(s);
}

static int crossentropy_forward_backward(float *loss, float *dlogits, const float *logits, const int32_t *targets,
                                       int N, int V, float scale, int *bad) {
    int kept = 0, nbad = 0;
    for (int i = 0; i < N; i++) {
        int y = targets[i];
        if (y >= 0 && y < V) kept++;
        else if (y != -1) nbad++;
    }
    if (bad) *bad = nbad;
    double *terms = malloc((size_t)(N > 0 ? N : 1) * sizeof(double));
    double g = kept > 0 ? (double)scale / kept : 0.0;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < N; i++) {
        const float *z = logits + (size_t)i * V;
        float *dz = dlogits ? dlogits + (size_t)i * V : NULL;
        int y = targets[i];
        if (y < 0 || y >= V) {
            if (terms) terms[i] = 0.0;
            if (dz) memset(dz, 0, (size_t)V * sizeof(float));
            continue;
        }
        float mx;
        double ls = row_lse(z, V, &mx);
        if (terms) terms[i] = ls - ((double)z[y] - mx);
        if (dz) {
            for (int j = 0; j < V; j++) dz[j] = (float)(g * exp((double)z[j] - mx - ls));
            dz[y] = (float)(g * (exp((double)z[y] - mx - ls) - 1.0));
        }
    }
    double total = 0.0;
    if (terms)
        for (int i = 0; i < N; i++) total += terms[i];
    free(terms);
    *loss = kept > 0 && terms ? (float)(total / kept) : 0.0f;
    return terms || N == 0 ? kept : -1;
}
