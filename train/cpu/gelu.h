/* cpu/gelu.h — the CPU loops that work element by element: GELU (tanh form,
 * train/train_math.h) forward and backward, and the residual connection's sum (whose backward
 * is the identity: the spine adds the gradient into both branches). A matrix product's bias is
 * added by the product itself (train/cpu/matmul.h).
 *
 * Included once per instruction set by train/cpu/loops.h (LOOPS_NAME renames each copy).
 */
#define gelu_forward LOOPS_NAME(gelu_forward)
#define gelu_backward LOOPS_NAME(gelu_backward)
#define residual_forward LOOPS_NAME(residual_forward)

/* out, inp are (N) */
static void gelu_forward(float *out, const float *inp, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) out[i] = xtts_gelu(inp[i]);
}

/* dinp += gelu'(inp) * dout, all (N) */
static void gelu_backward(float *dinp, const float *inp, const float *dout, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) dinp[i] += xtts_gelu_grad(inp[i]) * dout[i];
}

/* out = inp1 + inp2, all (N) */
static void residual_forward(float *out, const float *inp1, const float *inp2, size_t N) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) out[i] = inp1[i] + inp2[i];
}
