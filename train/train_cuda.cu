// train_cuda.cu — the xtts-train step on a CUDA device (train/train_cuda.h).
//
// The same layers as train/model.c, in the same order: cuBLAS for every matrix product
// (llm.c's row-major-as-column-major calls), kernels for the rest that call the per-element
// functions of train/train_math.h. Attention permutes q, k, v to (B, NH, T, hs) and uses
// strided-batched products over (b, h), with a causal softmax kernel between them.
// The host glue only allocates, copies and launches.
#include "train/train_cuda.h"
#include "train/train_math.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const int THREADS = 256;

inline unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

// ---- kernels ----------------------------------------------------------------------------

struct batch_dev {
    int B, T, text_stride, mel_stride;
    const int *text, *n_text, *n_frames;
    const float *mel;
};

// out (B,T,C); see xtts_encoder_forward in model.c
__global__ void k_encoder_fwd(float *out, batch_dev bt, const float *wte, const float *wpe_text, const float *wpe_mel,
                              const float *melin_w, const float *melin_b, const float *mel_start, int C, int M) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)bt.B * bt.T * C) return;
    int c = (int)(idx % C), t = (int)((idx / C) % bt.T), b = (int)(idx / ((size_t)C * bt.T));
    int nt = bt.n_text[b], nf = bt.n_frames[b];
    if (nf == 0) nt = 0;
    float v = 0.0f;
    if (t < nt) {
        v = wte[(size_t)bt.text[(size_t)b * bt.text_stride + t] * C + c] + wpe_text[(size_t)t * C + c];
    } else if (t < nt + nf) {
        int j = t - nt;
        const float *x = j == 0 ? mel_start : bt.mel + ((size_t)b * bt.mel_stride + (j - 1)) * M;
        float s = melin_b[c];
        for (int k = 0; k < M; k++) s += melin_w[(size_t)c * M + k] * x[k];
        v = s + wpe_mel[(size_t)j * C + c];
    }
    out[idx] = v;
}

__global__ void k_encoder_bwd(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w, float *dmelin_b,
                              float *dmel_start, const float *dout, batch_dev bt, const float *mel_start,
                              const float *melin_w, int C, int M) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)bt.B * bt.T * C) return;
    int c = (int)(idx % C), t = (int)((idx / C) % bt.T), b = (int)(idx / ((size_t)C * bt.T));
    int nt = bt.n_text[b], nf = bt.n_frames[b];
    if (nf == 0 || t >= nt + nf) return;
    float d = dout[idx];
    if (t < nt) {
        atomicAdd(&dwte[(size_t)bt.text[(size_t)b * bt.text_stride + t] * C + c], d);
        atomicAdd(&dwpe_text[(size_t)t * C + c], d);
        return;
    }
    int j = t - nt;
    atomicAdd(&dwpe_mel[(size_t)j * C + c], d);
    atomicAdd(&dmelin_b[c], d);
    const float *x = j == 0 ? mel_start : bt.mel + ((size_t)b * bt.mel_stride + (j - 1)) * M;
    for (int k = 0; k < M; k++) {
        atomicAdd(&dmelin_w[(size_t)c * M + k], d * x[k]);
        if (j == 0) atomicAdd(&dmel_start[k], d * melin_w[(size_t)c * M + k]);
    }
}

// one thread per row (rows are C <= a few thousand wide; simple and exact like the CPU loop)
__global__ void k_layernorm_fwd(float *out, float *mean, float *rstd, const float *inp, const float *w,
                                const float *bias, int N, int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const float *x = inp + (size_t)row * C;
    float m = 0.0f;
    for (int i = 0; i < C; i++) m += x[i];
    m /= C;
    float v = 0.0f;
    for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
    v /= C;
    float s = 1.0f / sqrtf(v + 1e-5f);
    float *o = out + (size_t)row * C;
    for (int i = 0; i < C; i++) o[i] = (s * (x[i] - m)) * w[i] + bias[i];
    mean[row] = m;
    rstd[row] = s;
}

__global__ void k_layernorm_bwd_inp(float *dinp, const float *dout, const float *inp, const float *w,
                                    const float *mean, const float *rstd, int N, int C) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= N) return;
    const float *d = dout + (size_t)row * C, *x = inp + (size_t)row * C;
    float m = mean[row], s = rstd[row], dm = 0.0f, dnm = 0.0f;
    for (int i = 0; i < C; i++) {
        float dn = w[i] * d[i];
        dm += dn;
        dnm += dn * (x[i] - m) * s;
    }
    dm /= C;
    dnm /= C;
    for (int i = 0; i < C; i++) {
        float norm = (x[i] - m) * s;
        dinp[(size_t)row * C + i] += (w[i] * d[i] - dm - norm * dnm) * s;
    }
}

// per channel: sums over rows in order (as the CPU does)
__global__ void k_layernorm_bwd_params(float *dw, float *db, const float *dout, const float *inp,
                                       const float *mean, const float *rstd, int N, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= C) return;
    float sw = 0.0f, sb = 0.0f;
    for (int r = 0; r < N; r++) {
        float d = dout[(size_t)r * C + i];
        sw += (inp[(size_t)r * C + i] - mean[r]) * rstd[r] * d;
        sb += d;
    }
    dw[i] += sw;
    db[i] += sb;
}

__global__ void k_bias_fill(float *out, const float *bias, size_t N, int OC) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx < N * OC) out[idx] = bias ? bias[idx % OC] : 0.0f;
}

__global__ void k_bias_bwd(float *db, const float *dout, int N, int OC) {
    int oc = blockIdx.x * blockDim.x + threadIdx.x;
    if (oc >= OC) return;
    float s = 0.0f;
    for (int r = 0; r < N; r++) s += dout[(size_t)r * OC + oc];
    db[oc] += s;
}

// qkv (B,T,3C) -> q, k, v (B,NH,T,hs)
__global__ void k_permute(float *q, float *k, float *v, const float *qkv, int B, int T, int NH, int hs) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * NH * T * hs) return;
    int i = (int)(idx % hs), t = (int)((idx / hs) % T), h = (int)((idx / ((size_t)hs * T)) % NH);
    int b = (int)(idx / ((size_t)hs * T * NH));
    int C = NH * hs;
    size_t src = ((size_t)b * T + t) * 3 * C + (size_t)h * hs + i;
    q[idx] = qkv[src];
    k[idx] = qkv[src + C];
    v[idx] = qkv[src + 2 * C];
}

// dq, dk, dv (B,NH,T,hs) -> dqkv (B,T,3C) (added)
__global__ void k_unpermute_qkv(float *dqkv, const float *dq, const float *dk, const float *dv, int B, int T, int NH,
                                int hs) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * NH * T * hs) return;
    int i = (int)(idx % hs), t = (int)((idx / hs) % T), h = (int)((idx / ((size_t)hs * T)) % NH);
    int b = (int)(idx / ((size_t)hs * T * NH));
    int C = NH * hs;
    size_t dst = ((size_t)b * T + t) * 3 * C + (size_t)h * hs + i;
    dqkv[dst] += dq[idx];
    dqkv[dst + C] += dk[idx];
    dqkv[dst + 2 * C] += dv[idx];
}

// y (B,NH,T,hs) -> out (B,T,C), and the reverse for gradients
__global__ void k_unpermute(float *out, const float *y, int B, int T, int NH, int hs) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * NH * T * hs) return;
    int i = (int)(idx % hs), t = (int)((idx / hs) % T), h = (int)((idx / ((size_t)hs * T)) % NH);
    int b = (int)(idx / ((size_t)hs * T * NH));
    out[((size_t)b * T + t) * NH * hs + (size_t)h * hs + i] = y[idx];
}

__global__ void k_permute_grad(float *dy, const float *dout, int B, int T, int NH, int hs) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * NH * T * hs) return;
    int i = (int)(idx % hs), t = (int)((idx / hs) % T), h = (int)((idx / ((size_t)hs * T)) % NH);
    int b = (int)(idx / ((size_t)hs * T * NH));
    dy[idx] = dout[((size_t)b * T + t) * NH * hs + (size_t)h * hs + i];
}

// causal softmax of each row of att (B*NH*T rows of T), scaled; zeros above the diagonal
__global__ void k_softmax_causal(float *att, int rows, int T, float scale) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int t = r % T;
    float *row = att + (size_t)r * T;
    float mx = -INFINITY;
    for (int t2 = 0; t2 <= t; t2++) mx = fmaxf(mx, row[t2] * scale);
    float sum = 0.0f;
    for (int t2 = 0; t2 <= t; t2++) {
        float e = expf(row[t2] * scale - mx);
        row[t2] = e;
        sum += e;
    }
    for (int t2 = 0; t2 <= t; t2++) row[t2] /= sum;
    for (int t2 = t + 1; t2 < T; t2++) row[t2] = 0.0f;
}

// datt -> dpre in place: P * (dP - sum(P dP)) * scale
__global__ void k_softmax_bwd(float *datt, const float *att, int rows, int T, float scale) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    int t = r % T;
    const float *p = att + (size_t)r * T;
    float *g = datt + (size_t)r * T;
    float dot = 0.0f;
    for (int t2 = 0; t2 <= t; t2++) dot += p[t2] * g[t2];
    for (int t2 = 0; t2 <= t; t2++) g[t2] = p[t2] * (g[t2] - dot) * scale;
    for (int t2 = t + 1; t2 < T; t2++) g[t2] = 0.0f;
}

__global__ void k_gelu_fwd(float *out, const float *inp, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) out[i] = xtts_gelu(inp[i]);
}

__global__ void k_gelu_bwd(float *dinp, const float *inp, const float *dout, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) dinp[i] += xtts_gelu_grad(inp[i]) * dout[i];
}

__global__ void k_residual(float *out, const float *a, const float *b, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) out[i] = a[i] + b[i];
}

// per position: L1 sum over M and the stop BCE (into parts[2*pos]); dhead scaled when given
__global__ void k_loss(float *parts, float *dhead, const float *head, batch_dev bt, int M, float pos_weight,
                       float mel_scale, float stop_scale) {
    size_t pos = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (pos >= (size_t)bt.B * bt.T) return;
    int t = (int)(pos % bt.T), b = (int)(pos / bt.T);
    int nt = bt.n_text[b], nf = bt.n_frames[b], M1 = M + 1;
    const float *h = head + pos * M1;
    float *dh = dhead ? dhead + pos * M1 : nullptr;
    if (nf == 0 || t < nt || t >= nt + nf) {
        parts[2 * pos] = parts[2 * pos + 1] = 0.0f;
        if (dh)
            for (int k = 0; k < M1; k++) dh[k] = 0.0f;
        return;
    }
    int j = t - nt;
    const float *y = bt.mel + ((size_t)b * bt.mel_stride + j) * M;
    float l1 = 0.0f;
    for (int k = 0; k < M; k++) {
        float diff = h[k] - y[k];
        l1 += fabsf(diff);
        if (dh) dh[k] = (diff > 0.0f ? 1.0f : diff < 0.0f ? -1.0f : 0.0f) * mel_scale;
    }
    float target = j == nf - 1 ? 1.0f : 0.0f;
    parts[2 * pos] = l1;
    parts[2 * pos + 1] = xtts_bce_logits(h[M], target, pos_weight);
    if (dh) dh[M] = xtts_bce_logits_grad(h[M], target, pos_weight) * stop_scale;
}

// sum of squares per block (fixed grid), added on the host in block order
__global__ void k_sumsq(float *partial, const float *x, size_t n) {
    __shared__ float sh[THREADS];
    float s = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += x[i] * x[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

__global__ void k_adamw(float *p, const float *g, float *m, float *v, size_t n, float grad_scale, float lr, float b1,
                        float b2, float eps, float wd, float b1c, float b2c) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = xtts_adamw_update(p[i], g[i] * grad_scale, &m[i], &v[i], lr, b1, b2, eps, wd, b1c, b2c);
}

const int NORM_BLOCKS = 256;

}  // namespace

// ---- host ---------------------------------------------------------------------------------

struct xtts_cuda_trainer {
    xtts_model_config cfg;
    int B_max, T_max, text_stride_max, mel_stride_max;
    size_t P;
    size_t sizes[XTTS_NUM_PARAM_TENSORS];
    float stop_pos_weight;
    cudaStream_t compute, copy;
    cudaEvent_t staged;
    cublasHandle_t blas;
    float *params, *grads, *m, *v;  // P each
    float *acts;                    // activations, dense for the current (B,T)
    size_t acts_floats;
    float *scratch;                 // gradient scratch and attention temporaries
    size_t scratch_floats;
    float *parts, *norm_partial;    // loss parts (2 B T_max), norm partial sums (NORM_BLOCKS)
    int *text, *n_text, *n_frames;  // staged batch
    float *mel;
    batch_dev bt;
    std::vector<float> host_parts;
};

static xtts_status cuda_fail(xtts_error *err, cudaError_t e, const char *what) {
    return xtts_error_set(err, XTTS_EIO, "cuda: %s: %s", what, cudaGetErrorString(e));
}

#define CU(call, what)                                      \
    do {                                                    \
        cudaError_t e_ = (call);                            \
        if (e_ != cudaSuccess) return cuda_fail(err, e_, what); \
    } while (0)
#define BL(call, what)                                                                        \
    do {                                                                                      \
        if ((call) != CUBLAS_STATUS_SUCCESS) return xtts_error_set(err, XTTS_EIO, "cublas: %s failed", what); \
    } while (0)

static float *tensor(const xtts_cuda_trainer *t, float *mem, int i) {
    for (int k = 0; k < i; k++) mem += t->sizes[k];
    return mem;
}

// out (N,OC) = inp (N,C) . weight^T + bias
static xtts_status matmul_fwd(xtts_cuda_trainer *t, float *out, const float *inp, const float *w, const float *bias,
                              int N, int C, int OC, xtts_error *err) {
    const float one = 1.0f;
    k_bias_fill<<<blocks_for((size_t)N * OC), THREADS, 0, t->compute>>>(out, bias, (size_t)N, OC);
    BL(cublasSgemm(t->blas, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, C, &one, w, C, inp, C, &one, out, OC), "matmul forward");
    return XTTS_OK;
}

// dinp (N,C) += dout . weight; dweight (OC,C) += dout^T . inp; dbias += column sums
static xtts_status matmul_bwd(xtts_cuda_trainer *t, float *dinp, float *dw, float *db, const float *dout,
                              const float *inp, const float *w, int N, int C, int OC, xtts_error *err) {
    const float one = 1.0f;
    BL(cublasSgemm(t->blas, CUBLAS_OP_N, CUBLAS_OP_N, C, N, OC, &one, w, C, dout, OC, &one, dinp, C), "matmul dinp");
    BL(cublasSgemm(t->blas, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, N, &one, inp, C, dout, OC, &one, dw, C), "matmul dweight");
    if (db) k_bias_bwd<<<blocks_for(OC), THREADS, 0, t->compute>>>(db, dout, N, OC);
    return XTTS_OK;
}

struct acts_view {
    float *encoded, *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *residual2, *ln2, *ln2_mean, *ln2_rstd, *fch,
        *fch_gelu, *residual3, *lnf, *lnf_mean, *lnf_rstd, *head;
};
struct scratch_view {
    float *dresidual, *dhead, *dln, *datty, *dqkv, *dfch, *dfch_gelu, *tmp, *q, *k, *v, *y, *dq, *dk, *dv, *datt;
};

static size_t layout(const xtts_model_config &c, int B, int T, float *a_base, acts_view *a, float *s_base,
                     scratch_view *s, size_t *scratch_floats) {
    size_t L = c.n_layer, C = c.channels, NH = c.n_head, M1 = c.n_mels + 1, BT = (size_t)B * T;
    size_t TT = (size_t)T * T;
    float *p = a_base;
    size_t n = 0;
#define TAKE(dst, cnt) do { if (a) dst = p + n; n += (cnt); } while (0)
    TAKE(a->encoded, BT * C);
    TAKE(a->ln1, L * BT * C);
    TAKE(a->ln1_mean, L * BT);
    TAKE(a->ln1_rstd, L * BT);
    TAKE(a->qkv, L * BT * 3 * C);
    TAKE(a->atty, L * BT * C);
    TAKE(a->att, L * B * NH * TT);
    TAKE(a->residual2, L * BT * C);
    TAKE(a->ln2, L * BT * C);
    TAKE(a->ln2_mean, L * BT);
    TAKE(a->ln2_rstd, L * BT);
    TAKE(a->fch, L * BT * 4 * C);
    TAKE(a->fch_gelu, L * BT * 4 * C);
    TAKE(a->residual3, L * BT * C);
    TAKE(a->lnf, BT * C);
    TAKE(a->lnf_mean, BT);
    TAKE(a->lnf_rstd, BT);
    TAKE(a->head, BT * M1);
#undef TAKE
    size_t acts = n;
    p = s_base;
    n = 0;
#define TAKE(dst, cnt) do { if (s) dst = p + n; n += (cnt); } while (0)
    TAKE(s->dresidual, BT * C);
    TAKE(s->dhead, BT * M1);
    TAKE(s->dln, BT * C);
    TAKE(s->datty, BT * C);
    TAKE(s->dqkv, BT * 3 * C);
    TAKE(s->dfch, BT * 4 * C);
    TAKE(s->dfch_gelu, BT * 4 * C);
    TAKE(s->tmp, BT * C);
    TAKE(s->q, BT * C);
    TAKE(s->k, BT * C);
    TAKE(s->v, BT * C);
    TAKE(s->y, BT * C);
    TAKE(s->dq, BT * C);
    TAKE(s->dk, BT * C);
    TAKE(s->dv, BT * C);
    TAKE(s->datt, (size_t)B * NH * TT);
#undef TAKE
    if (scratch_floats) *scratch_floats = n;
    return acts;
}

extern "C" xtts_status xtts_cuda_trainer_new(const xtts_model *m, int ordinal, xtts_cuda_trainer **out,
                                             xtts_error *err) {
    *out = nullptr;
    CU(cudaSetDevice(ordinal), "select device");
    xtts_cuda_trainer *t = new (std::nothrow) xtts_cuda_trainer();
    if (!t) return xtts_error_set(err, XTTS_ENOMEM, "cuda: out of host memory");
    t->cfg = m->config;
    t->B_max = m->B_max;
    t->T_max = m->T_max;
    t->P = m->num_parameters;
    t->stop_pos_weight = m->stop_pos_weight;
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) t->sizes[i] = m->param_sizes[i];
    t->text_stride_max = m->config.max_text_pos;
    t->mel_stride_max = m->config.max_mel_pos;
    t->acts_floats = layout(t->cfg, t->B_max, t->T_max, nullptr, nullptr, nullptr, nullptr, &t->scratch_floats);
    size_t M = (size_t)t->cfg.n_mels, B = (size_t)t->B_max;
    *out = t;  // from here on, xtts_cuda_trainer_delete frees what was made
    CU(cudaStreamCreateWithFlags(&t->compute, cudaStreamNonBlocking), "compute stream");
    CU(cudaStreamCreateWithFlags(&t->copy, cudaStreamNonBlocking), "copy stream");
    CU(cudaEventCreateWithFlags(&t->staged, cudaEventDisableTiming), "event");
    BL(cublasCreate(&t->blas), "create handle");
    BL(cublasSetStream(t->blas, t->compute), "set stream");
    CU(cudaMalloc(&t->params, 4 * t->P), "parameters");
    CU(cudaMalloc(&t->grads, 4 * t->P), "gradients");
    CU(cudaMalloc(&t->m, 4 * t->P), "AdamW m");
    CU(cudaMalloc(&t->v, 4 * t->P), "AdamW v");
    CU(cudaMemset(t->m, 0, 4 * t->P), "AdamW m");
    CU(cudaMemset(t->v, 0, 4 * t->P), "AdamW v");
    CU(cudaMalloc(&t->acts, 4 * t->acts_floats), "activations");
    CU(cudaMalloc(&t->scratch, 4 * t->scratch_floats), "gradient scratch");
    CU(cudaMalloc(&t->parts, 4 * 2 * B * t->T_max), "loss parts");
    CU(cudaMalloc(&t->norm_partial, 4 * NORM_BLOCKS), "norm");
    CU(cudaMalloc(&t->text, 4 * B * t->text_stride_max), "batch text");
    CU(cudaMalloc(&t->n_text, 4 * B), "batch lengths");
    CU(cudaMalloc(&t->n_frames, 4 * B), "batch lengths");
    CU(cudaMalloc(&t->mel, 4 * B * t->mel_stride_max * M), "batch mel");
    CU(cudaMemcpy(t->params, m->params_memory, 4 * t->P, cudaMemcpyHostToDevice), "upload parameters");
    t->host_parts.resize(2 * B * t->T_max);
    return XTTS_OK;
}

extern "C" void xtts_cuda_trainer_delete(xtts_cuda_trainer *t) {
    if (!t) return;
    if (t->compute) cudaStreamSynchronize(t->compute);
    if (t->copy) cudaStreamSynchronize(t->copy);
    void *bufs[] = {t->params, t->grads, t->m,    t->v,       t->acts, t->scratch,
                    t->parts,  t->norm_partial, t->text, t->n_text, t->n_frames, t->mel};
    for (void *b : bufs)
        if (b) cudaFree(b);
    if (t->blas) cublasDestroy(t->blas);
    if (t->staged) cudaEventDestroy(t->staged);
    if (t->compute) cudaStreamDestroy(t->compute);
    if (t->copy) cudaStreamDestroy(t->copy);
    delete t;
}

extern "C" xtts_status xtts_cuda_trainer_pin(xtts_cuda_trainer *t, void *ptr, size_t bytes, xtts_error *err) {
    (void)t;
    CU(cudaHostRegister(ptr, bytes, cudaHostRegisterDefault), "pin a batch slot");
    return XTTS_OK;
}

extern "C" xtts_status xtts_cuda_trainer_upload(xtts_cuda_trainer *t, const float *params, const float *m,
                                                const float *v, xtts_error *err) {
    CU(cudaMemcpy(t->params, params, 4 * t->P, cudaMemcpyHostToDevice), "upload parameters");
    CU(cudaMemcpy(t->m, m, 4 * t->P, cudaMemcpyHostToDevice), "upload AdamW m");
    CU(cudaMemcpy(t->v, v, 4 * t->P, cudaMemcpyHostToDevice), "upload AdamW v");
    return XTTS_OK;
}

extern "C" xtts_status xtts_cuda_trainer_download(xtts_cuda_trainer *t, float *params, float *m, float *v,
                                                  xtts_error *err) {
    CU(cudaStreamSynchronize(t->compute), "finish the step");
    CU(cudaMemcpy(params, t->params, 4 * t->P, cudaMemcpyDeviceToHost), "download parameters");
    CU(cudaMemcpy(m, t->m, 4 * t->P, cudaMemcpyDeviceToHost), "download AdamW m");
    CU(cudaMemcpy(v, t->v, 4 * t->P, cudaMemcpyDeviceToHost), "download AdamW v");
    return XTTS_OK;
}

extern "C" xtts_status xtts_cuda_trainer_stage(xtts_cuda_trainer *t, const xtts_model_batch *bt, xtts_error *err) {
    if (bt->B > t->B_max || bt->T > t->T_max || bt->text_stride > t->text_stride_max ||
        bt->mel_stride > t->mel_stride_max)
        return xtts_error_set(err, XTTS_ERANGE, "cuda: batch %d x %d does not fit the device buffers", bt->B, bt->T);
    size_t B = (size_t)bt->B, M = (size_t)t->cfg.n_mels;
    // the previous step must be done with the device batch before it is overwritten
    CU(cudaStreamSynchronize(t->compute), "finish the previous step");
    CU(cudaMemcpyAsync(t->text, bt->text, 4 * B * bt->text_stride, cudaMemcpyHostToDevice, t->copy), "copy text");
    CU(cudaMemcpyAsync(t->n_text, bt->n_text, 4 * B, cudaMemcpyHostToDevice, t->copy), "copy lengths");
    CU(cudaMemcpyAsync(t->n_frames, bt->n_frames, 4 * B, cudaMemcpyHostToDevice, t->copy), "copy lengths");
    CU(cudaMemcpyAsync(t->mel, bt->mel, 4 * B * bt->mel_stride * M, cudaMemcpyHostToDevice, t->copy), "copy mel");
    CU(cudaEventRecord(t->staged, t->copy), "record the copy");
    t->bt = batch_dev{bt->B, bt->T, bt->text_stride, bt->mel_stride, t->text, t->n_text, t->n_frames, t->mel};
    return XTTS_OK;
}

static xtts_status forward(xtts_cuda_trainer *t, acts_view &a, scratch_view &s, int *frames, xtts_error *err) {
    const xtts_model_config &c = t->cfg;
    int B = t->bt.B, T = t->bt.T, L = c.n_layer, C = c.channels, NH = c.n_head, M = c.n_mels, hs = C / NH;
    size_t BT = (size_t)B * T, TT = (size_t)T * T;
    float *p = t->params;
    CU(cudaStreamWaitEvent(t->compute, t->staged, 0), "wait for the batch");
    k_encoder_fwd<<<blocks_for(BT * C), THREADS, 0, t->compute>>>(a.encoded, t->bt, tensor(t, p, 0), tensor(t, p, 1),
                                                                  tensor(t, p, 2), tensor(t, p, 3), tensor(t, p, 4),
                                                                  tensor(t, p, 5), C, M);
    const float one = 1.0f, zero = 0.0f;
    for (int l = 0; l < L; l++) {
        const float *res = l == 0 ? a.encoded : a.residual3 + (size_t)(l - 1) * BT * C;
        float *ln1 = a.ln1 + l * BT * C, *qkv = a.qkv + l * BT * 3 * C, *atty = a.atty + l * BT * C;
        float *att = a.att + (size_t)l * B * NH * TT, *res2 = a.residual2 + l * BT * C, *ln2 = a.ln2 + l * BT * C;
        float *fch = a.fch + l * BT * 4 * C, *fchg = a.fch_gelu + l * BT * 4 * C, *res3 = a.residual3 + l * BT * C;
        k_layernorm_fwd<<<blocks_for(BT), THREADS, 0, t->compute>>>(ln1, a.ln1_mean + l * BT, a.ln1_rstd + l * BT, res,
                                                                    tensor(t, p, 6) + l * C, tensor(t, p, 7) + l * C,
                                                                    (int)BT, C);
        xtts_status st = matmul_fwd(t, qkv, ln1, tensor(t, p, 8) + (size_t)l * 3 * C * C, tensor(t, p, 9) + l * 3 * C,
                                    (int)BT, C, 3 * C, err);
        if (st) return st;
        size_t nq = (size_t)B * NH * T * hs;
        k_permute<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.q, s.k, s.v, qkv, B, T, NH, hs);
        // att (T,T) per (b,h) = q k^T
        BL(cublasSgemmStridedBatched(t->blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, &one, s.k, hs, (long long)T * hs,
                                     s.q, hs, (long long)T * hs, &zero, att, T, (long long)TT, B * NH),
           "attention scores");
        k_softmax_causal<<<blocks_for((size_t)B * NH * T), THREADS, 0, t->compute>>>(att, B * NH * T, T,
                                                                                     1.0f / sqrtf((float)hs));
        // y (T,hs) = att v
        BL(cublasSgemmStridedBatched(t->blas, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, &one, s.v, hs, (long long)T * hs,
                                     att, T, (long long)TT, &zero, s.y, hs, (long long)T * hs, B * NH),
           "attention values");
        k_unpermute<<<blocks_for(nq), THREADS, 0, t->compute>>>(atty, s.y, B, T, NH, hs);
        st = matmul_fwd(t, s.tmp, atty, tensor(t, p, 10) + (size_t)l * C * C, tensor(t, p, 11) + l * C, (int)BT, C, C,
                        err);
        if (st) return st;
        k_residual<<<blocks_for(BT * C), THREADS, 0, t->compute>>>(res2, res, s.tmp, BT * C);
        k_layernorm_fwd<<<blocks_for(BT), THREADS, 0, t->compute>>>(ln2, a.ln2_mean + l * BT, a.ln2_rstd + l * BT, res2,
                                                                    tensor(t, p, 12) + l * C, tensor(t, p, 13) + l * C,
                                                                    (int)BT, C);
        st = matmul_fwd(t, fch, ln2, tensor(t, p, 14) + (size_t)l * 4 * C * C, tensor(t, p, 15) + l * 4 * C, (int)BT, C,
                        4 * C, err);
        if (st) return st;
        k_gelu_fwd<<<blocks_for(BT * 4 * C), THREADS, 0, t->compute>>>(fchg, fch, BT * 4 * C);
        st = matmul_fwd(t, s.tmp, fchg, tensor(t, p, 16) + (size_t)l * C * 4 * C, tensor(t, p, 17) + l * C, (int)BT,
                        4 * C, C, err);
        if (st) return st;
        k_residual<<<blocks_for(BT * C), THREADS, 0, t->compute>>>(res3, res2, s.tmp, BT * C);
    }
    k_layernorm_fwd<<<blocks_for(BT), THREADS, 0, t->compute>>>(a.lnf, a.lnf_mean, a.lnf_rstd,
                                                                a.residual3 + (size_t)(L - 1) * BT * C, tensor(t, p, 18),
                                                                tensor(t, p, 19), (int)BT, C);
    xtts_status st = matmul_fwd(t, a.head, a.lnf, tensor(t, p, 20), tensor(t, p, 21), (int)BT, C, M + 1, err);
    if (st) return st;
    // frames come from the host copy of the lengths (the staged batch's n_frames)
    int nf = 0;
    std::vector<int> host_nf(B);
    CU(cudaMemcpyAsync(host_nf.data(), t->n_frames, 4 * (size_t)B, cudaMemcpyDeviceToHost, t->compute), "lengths");
    CU(cudaStreamSynchronize(t->compute), "lengths");
    for (int b = 0; b < B; b++) nf += host_nf[b];
    *frames = nf;
    return XTTS_OK;
}

static xtts_status losses(xtts_cuda_trainer *t, const acts_view &a, float *dhead, int frames, float *loss,
                          float *mel_loss, float *stop_loss, xtts_error *err) {
    int M = t->cfg.n_mels;
    size_t BT = (size_t)t->bt.B * t->bt.T;
    float mel_scale = frames ? 1.0f / ((float)frames * M) : 0.0f, stop_scale = frames ? 1.0f / frames : 0.0f;
    k_loss<<<blocks_for(BT), THREADS, 0, t->compute>>>(t->parts, dhead, a.head, t->bt, M, t->stop_pos_weight, mel_scale,
                                                       stop_scale);
    CU(cudaMemcpyAsync(t->host_parts.data(), t->parts, 4 * 2 * BT, cudaMemcpyDeviceToHost, t->compute), "losses");
    CU(cudaStreamSynchronize(t->compute), "losses");
    double l1 = 0.0, bce = 0.0;
    for (size_t i = 0; i < BT; i++) l1 += t->host_parts[2 * i], bce += t->host_parts[2 * i + 1];
    *mel_loss = frames ? (float)(l1 / ((double)frames * M)) : 0.0f;
    *stop_loss = frames ? (float)(bce / frames) : 0.0f;
    *loss = *mel_loss + *stop_loss;
    return XTTS_OK;
}

extern "C" xtts_status xtts_cuda_trainer_forward(xtts_cuda_trainer *t, float *loss, float *mel_loss, float *stop_loss,
                                                 int *frames, xtts_error *err) {
    acts_view a;
    scratch_view s;
    layout(t->cfg, t->bt.B, t->bt.T, t->acts, &a, t->scratch, &s, nullptr);
    xtts_status st = forward(t, a, s, frames, err);
    if (st) return st;
    return losses(t, a, nullptr, *frames, loss, mel_loss, stop_loss, err);
}

extern "C" xtts_status xtts_cuda_trainer_step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o,
                                              float *loss, float *mel_loss, float *stop_loss, float *grad_norm,
                                              xtts_error *err) {
    const xtts_model_config &c = t->cfg;
    int B = t->bt.B, T = t->bt.T, L = c.n_layer, C = c.channels, NH = c.n_head, M = c.n_mels, hs = C / NH;
    size_t BT = (size_t)B * T, TT = (size_t)T * T, nq = (size_t)B * NH * T * hs;
    acts_view a;
    scratch_view s;
    layout(c, B, T, t->acts, &a, t->scratch, &s, nullptr);
    int frames = 0;
    xtts_status st = forward(t, a, s, &frames, err);
    if (st) return st;
    st = losses(t, a, s.dhead, frames, loss, mel_loss, stop_loss, err);
    if (st) return st;

    float *p = t->params, *g = t->grads;
    const float one = 1.0f, zero = 0.0f;
    CU(cudaMemsetAsync(g, 0, 4 * t->P, t->compute), "zero gradients");
    CU(cudaMemsetAsync(s.dln, 0, 4 * BT * C, t->compute), "scratch");
    st = matmul_bwd(t, s.dln, tensor(t, g, 20), tensor(t, g, 21), s.dhead, a.lnf, tensor(t, p, 20), (int)BT, C, M + 1,
                    err);
    if (st) return st;
    CU(cudaMemsetAsync(s.dresidual, 0, 4 * BT * C, t->compute), "scratch");
    const float *last = a.residual3 + (size_t)(L - 1) * BT * C;
    k_layernorm_bwd_inp<<<blocks_for(BT), THREADS, 0, t->compute>>>(s.dresidual, s.dln, last, tensor(t, p, 18),
                                                                    a.lnf_mean, a.lnf_rstd, (int)BT, C);
    k_layernorm_bwd_params<<<blocks_for(C), THREADS, 0, t->compute>>>(tensor(t, g, 18), tensor(t, g, 19), s.dln, last,
                                                                      a.lnf_mean, a.lnf_rstd, (int)BT, C);
    for (int l = L - 1; l >= 0; l--) {
        const float *res = l == 0 ? a.encoded : a.residual3 + (size_t)(l - 1) * BT * C;
        const float *ln1 = a.ln1 + l * BT * C, *qkv = a.qkv + l * BT * 3 * C, *atty = a.atty + l * BT * C;
        const float *att = a.att + (size_t)l * B * NH * TT, *res2 = a.residual2 + l * BT * C;
        const float *ln2 = a.ln2 + l * BT * C, *fch = a.fch + l * BT * 4 * C, *fchg = a.fch_gelu + l * BT * 4 * C;
        CU(cudaMemsetAsync(s.dfch_gelu, 0, 4 * BT * 4 * C, t->compute), "scratch");
        st = matmul_bwd(t, s.dfch_gelu, tensor(t, g, 16) + (size_t)l * C * 4 * C, tensor(t, g, 17) + l * C,
                        s.dresidual, fchg, tensor(t, p, 16) + (size_t)l * C * 4 * C, (int)BT, 4 * C, C, err);
        if (st) return st;
        CU(cudaMemsetAsync(s.dfch, 0, 4 * BT * 4 * C, t->compute), "scratch");
        k_gelu_bwd<<<blocks_for(BT * 4 * C), THREADS, 0, t->compute>>>(s.dfch, fch, s.dfch_gelu, BT * 4 * C);
        CU(cudaMemsetAsync(s.dln, 0, 4 * BT * C, t->compute), "scratch");
        st = matmul_bwd(t, s.dln, tensor(t, g, 14) + (size_t)l * 4 * C * C, tensor(t, g, 15) + l * 4 * C, s.dfch, ln2,
                        tensor(t, p, 14) + (size_t)l * 4 * C * C, (int)BT, C, 4 * C, err);
        if (st) return st;
        k_layernorm_bwd_inp<<<blocks_for(BT), THREADS, 0, t->compute>>>(s.dresidual, s.dln, res2,
                                                                        tensor(t, p, 12) + l * C, a.ln2_mean + l * BT,
                                                                        a.ln2_rstd + l * BT, (int)BT, C);
        k_layernorm_bwd_params<<<blocks_for(C), THREADS, 0, t->compute>>>(
            tensor(t, g, 12) + l * C, tensor(t, g, 13) + l * C, s.dln, res2, a.ln2_mean + l * BT, a.ln2_rstd + l * BT,
            (int)BT, C);
        CU(cudaMemsetAsync(s.datty, 0, 4 * BT * C, t->compute), "scratch");
        st = matmul_bwd(t, s.datty, tensor(t, g, 10) + (size_t)l * C * C, tensor(t, g, 11) + l * C, s.dresidual, atty,
                        tensor(t, p, 10) + (size_t)l * C * C, (int)BT, C, C, err);
        if (st) return st;
        // attention: recompute q, k, v for this layer, then the four products
        k_permute<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.q, s.k, s.v, qkv, B, T, NH, hs);
        k_permute_grad<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.y, s.datty, B, T, NH, hs);  // dy
        // datt (T,T) = dy v^T
        BL(cublasSgemmStridedBatched(t->blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, &one, s.v, hs, (long long)T * hs,
                                     s.y, hs, (long long)T * hs, &zero, s.datt, T, (long long)TT, B * NH),
           "attention datt");
        // dv (T,hs) = att^T dy
        BL(cublasSgemmStridedBatched(t->blas, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, &one, s.y, hs, (long long)T * hs, att,
                                     T, (long long)TT, &zero, s.dv, hs, (long long)T * hs, B * NH),
           "attention dv");
        k_softmax_bwd<<<blocks_for((size_t)B * NH * T), THREADS, 0, t->compute>>>(s.datt, att, B * NH * T, T,
                                                                                  1.0f / sqrtf((float)hs));
        // dq (T,hs) = dpre k ; dk (T,hs) = dpre^T q
        BL(cublasSgemmStridedBatched(t->blas, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, &one, s.k, hs, (long long)T * hs,
                                     s.datt, T, (long long)TT, &zero, s.dq, hs, (long long)T * hs, B * NH),
           "attention dq");
        BL(cublasSgemmStridedBatched(t->blas, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, &one, s.q, hs, (long long)T * hs,
                                     s.datt, T, (long long)TT, &zero, s.dk, hs, (long long)T * hs, B * NH),
           "attention dk");
        CU(cudaMemsetAsync(s.dqkv, 0, 4 * BT * 3 * C, t->compute), "scratch");
        k_unpermute_qkv<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.dqkv, s.dq, s.dk, s.dv, B, T, NH, hs);
        CU(cudaMemsetAsync(s.dln, 0, 4 * BT * C, t->compute), "scratch");
        st = matmul_bwd(t, s.dln, tensor(t, g, 8) + (size_t)l * 3 * C * C, tensor(t, g, 9) + l * 3 * C, s.dqkv, ln1,
                        tensor(t, p, 8) + (size_t)l * 3 * C * C, (int)BT, C, 3 * C, err);
        if (st) return st;
        k_layernorm_bwd_inp<<<blocks_for(BT), THREADS, 0, t->compute>>>(s.dresidual, s.dln, res,
                                                                        tensor(t, p, 6) + l * C, a.ln1_mean + l * BT,
                                                                        a.ln1_rstd + l * BT, (int)BT, C);
        k_layernorm_bwd_params<<<blocks_for(C), THREADS, 0, t->compute>>>(
            tensor(t, g, 6) + l * C, tensor(t, g, 7) + l * C, s.dln, res, a.ln1_mean + l * BT, a.ln1_rstd + l * BT,
            (int)BT, C);
    }
    k_encoder_bwd<<<blocks_for(BT * C), THREADS, 0, t->compute>>>(
        tensor(t, g, 0), tensor(t, g, 1), tensor(t, g, 2), tensor(t, g, 3), tensor(t, g, 4), tensor(t, g, 5),
        s.dresidual, t->bt, tensor(t, p, 5), tensor(t, p, 3), C, M);

    // global norm (partial sums added on the host in block order), clipping folded into AdamW
    k_sumsq<<<NORM_BLOCKS, THREADS, 0, t->compute>>>(t->norm_partial, g, t->P);
    float partial[NORM_BLOCKS];
    CU(cudaMemcpyAsync(partial, t->norm_partial, sizeof partial, cudaMemcpyDeviceToHost, t->compute), "norm");
    CU(cudaStreamSynchronize(t->compute), "norm");
    double sq = 0.0;
    for (int i = 0; i < NORM_BLOCKS; i++) sq += partial[i];
    float norm = (float)sqrt(sq);
    *grad_norm = norm;
    float scale = (o->clip > 0.0f && norm > o->clip && std::isfinite(norm)) ? o->clip / (norm + 1e-6f) : 1.0f;
    float b1c = 1.0f - powf(o->beta1, (float)t_step), b2c = 1.0f - powf(o->beta2, (float)t_step);
    k_adamw<<<blocks_for(t->P), THREADS, 0, t->compute>>>(p, g, t->m, t->v, t->P, scale, lr, o->beta1, o->beta2, o->eps,
                                                         o->weight_decay, b1c, b2c);
    CU(cudaGetLastError(), "launch");
    return XTTS_OK;
}
