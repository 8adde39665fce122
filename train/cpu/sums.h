/* cpu/sums.h — the CPU loops' sums in an order fixed by the data's shape alone: whatever the
 * register width of the copy (train/cpu/loops.h), the same terms are added in the same order,
 * so that every copy computes the same bits. The layers that reduce (layer norm, attention's
 * softmax) call these; none of them adds floats in an order of its own choosing.
 *
 * Included once per instruction set by train/cpu/loops.h: the part under the guard is shared by
 * the copies, the rest is renamed per copy (LOOPS_NAME).
 */
#ifndef XTTS_CPU_SUMS_SHARED
#define XTTS_CPU_SUMS_SHARED

/* Sums vectorize yet add in an order fixed by the length alone: lane l of SUM_LANES running
 * sums takes elements l, l + SUM_LANES, ..., the tail goes into the first lanes, and the lanes
 * are added pairwise at the end. 16 lanes: one AVX-512 register, two AVX2 ones, four SSE. */
#define SUM_LANES 16
typedef float lanes __attribute__((vector_size(SUM_LANES * sizeof(float))));

/* unaligned vector load and store (macros: passing vectors by value would tie the ABI to
 * the instruction set) */
#define LOADV(v, p) memcpy(&(v), (p), sizeof(v))
#define STOREV(p, v) memcpy((p), &(v), sizeof(v))

#endif /* XTTS_CPU_SUMS_SHARED */

#define lanes_total LOOPS_NAME(lanes_total)
#define sum_fixed LOOPS_NAME(sum_fixed)
#define sum_sq_dev_fixed LOOPS_NAME(sum_sq_dev_fixed)
#define dot_fixed LOOPS_NAME(dot_fixed)
#define max_of LOOPS_NAME(max_of)

/* The SUM_LANES running sums added pairwise. */
static inline float lanes_total(const lanes *acc) {
    float l[SUM_LANES];
    memcpy(l, acc, sizeof l);
    for (int w = SUM_LANES / 2; w > 0; w /= 2)
        for (int i = 0; i < w; i++) l[i] += l[i + w];
    return l[0];
}

/* sum of x[i] */
static float sum_fixed(const float *x, int n) {
    lanes acc = {0};
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES) {
        lanes v;
        LOADV(v, x + i);
        acc += v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += x[i + l];
    return lanes_total(&acc);
}

/* sum of (x[i] - m)^2 */
static float sum_sq_dev_fixed(const float *x, float m, int n) {
    lanes acc = {0};
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES) {
        lanes v;
        LOADV(v, x + i);
        v -= m;
        acc += v * v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += (x[i + l] - m) * (x[i + l] - m);
    return lanes_total(&acc);
}

/* sum of x[i] y[i] */
static float dot_fixed(const float *x, const float *y, int n) {
    lanes acc = {0};
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES) {
        lanes u, v;
        LOADV(u, x + i);
        LOADV(v, y + i);
        acc += u * v;
    }
    for (int l = 0; i + l < n; l++) acc[l] += x[i + l] * y[i + l];
    return lanes_total(&acc);
}

/* largest x[i] (exact, so any order gives it) */
static float max_of(const float *x, int n) {
    float mx[SUM_LANES];
    for (int l = 0; l < SUM_LANES; l++) mx[l] = -INFINITY;
    int i = 0;
    for (; i + SUM_LANES <= n; i += SUM_LANES)
        for (int l = 0; l < SUM_LANES; l++) mx[l] = x[i + l] > mx[l] ? x[i + l] : mx[l];
    for (int l = 0; i + l < n; l++) mx[l] = x[i + l] > mx[l] ? x[i + l] : mx[l];
    for (int l = 1; l < SUM_LANES; l++) mx[0] = mx[l] > mx[0] ? mx[l] : mx[0];
    return mx[0];
}
