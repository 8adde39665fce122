/* cpu/adamw.h — the CPU loops of the optimizer's passes over all the parameters: the global
 * gradient norm (sums of squares in double, in chunks whose order is fixed by the length alone),
 * the clipping scale applied, and one AdamW step (train/train_math.h's update per element).
 * train/optim.c holds the schedule and the bias corrections and calls these.
 *
 * Included once per instruction set by train/cpu/loops.h: the part under the guard is shared by
 * the copies, the rest is renamed per copy (LOOPS_NAME).
 */
#ifndef XTTS_CPU_ADAMW_SHARED
#define XTTS_CPU_ADAMW_SHARED

/* The gradient norm's chunks and lanes (see grad_norm) */
#define NORM_CHUNK 65536
#define NORM_LANES 8

#endif /* XTTS_CPU_ADAMW_SHARED */

#define grad_norm LOOPS_NAME(grad_norm)
#define scale_values LOOPS_NAME(scale_values)
#define adamw_step LOOPS_NAME(adamw_step)

/* Global L2 norm of grads[0..n): sums of squares in double over chunks of NORM_CHUNK
 * (independent of the thread count), added in order. Within a chunk, NORM_LANES running sums
 * take every NORM_LANES-th element (a loop the compiler vectorizes, in an order fixed by the
 * chunk alone) and are added pairwise. */
static float grad_norm(const float *grads, size_t n) {
    size_t n_chunks = (n + NORM_CHUNK - 1) / NORM_CHUNK;
    double total = 0.0;
#pragma omp parallel for ordered schedule(static)
    for (size_t c = 0; c < n_chunks; c++) {
        size_t lo = c * NORM_CHUNK, hi = lo + NORM_CHUNK < n ? lo + NORM_CHUNK : n;
        double s[NORM_LANES] = {0};
        size_t i = lo;
        for (; i + NORM_LANES <= hi; i += NORM_LANES)
            for (int l = 0; l < NORM_LANES; l++) s[l] += (double)grads[i + l] * grads[i + l];
        for (int l = 0; i + l < hi; l++) s[l] += (double)grads[i + l] * grads[i + l];
        for (int w = NORM_LANES / 2; w > 0; w /= 2)
            for (int l = 0; l < w; l++) s[l] += s[l + w];
#pragma omp ordered
        total += s[0];
    }
    return (float)sqrt(total);
}

/* x[0..n) *= s */
static void scale_values(float *x, size_t n, float s) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) x[i] *= s;
}

/* One AdamW step over params, m, v [n] with the bias corrections b1c = 1 - beta1^t,
 * b2c = 1 - beta2^t. */
static void adamw_step(float *params, const float *grads, float *m, float *v, size_t n, float lr,
                       const xtts_optim_config *o, float b1c, float b2c) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
        params[i] = xtts_adamw_update(params[i], grads[i], &m[i], &v[i], lr, o->beta1, o->beta2, o->eps,
                                      o->weight_decay, b1c, b2c);
}
