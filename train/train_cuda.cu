// train_cuda.cu — the xtts-train step on a CUDA device (train/train_cuda.h).
//
// The same layers as train/model.c, in the same order: cuBLAS for every matrix product
// (llm.c's row-major-as-column-major calls), kernels for the rest that call the per-element
// functions of train/train_math.h. Attention permutes q, k, v to (B, NH, T, hs) and uses
// strided-batched products over (b, h), with a causal softmax kernel between them.
//
// How the kernels are laid out (docs/xtts-train.md, "On a CUDA device"): a row-wise
// operation (layer norm, softmax) gives each row to one warp, whose 32 lanes read
// consecutive elements (coalesced); a sum over rows (bias and layer-norm parameter
// gradients) is done in two deterministic passes, partial sums over blocks of rows and then
// those partials in block order; the losses and the gradient norm are reduced on the
// device, so a step launches everything without waiting and synchronizes once, at its end,
// to read three numbers. Precision (XTTS_PRECISION_*): fp32 products (cuBLAS's default math,
// as PyTorch's default), TF32 tensor cores, or bf16 tensor-core products of operands rounded
// to bf16 with fp32 accumulation, fp32 outputs, fp32 master weights and optimizer state (as
// PyTorch's bf16 autocast does for its matrix products).
// The host glue only allocates, copies and launches.
#include "train/train_cuda.h"
#include "train/train_math.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const int THREADS = 256;
const int WARPS = THREADS / 32;  // rows a block handles in the row-wise kernels

inline unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }
inline unsigned row_blocks(size_t rows) { return (unsigned)((rows + WARPS - 1) / WARPS); }

typedef __nv_bfloat16 bf16;

__device__ inline float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// the row a warp of a row-wise kernel works on (uniform across the warp), and its lane
__device__ inline size_t warp_row() { return blockIdx.x * (size_t)WARPS + threadIdx.x / 32; }
__device__ inline int lane_id() { return threadIdx.x & 31; }

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

// the embeddings' gradients (atomics: a token or position appears in several rows) and the
// per-element part of the mel input projection's; dmelin_w is a matrix product (below)
__global__ void k_encoder_bwd(float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_b, const float *dout,
                              batch_dev bt, int C) {
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
    atomicAdd(&dwpe_mel[(size_t)(t - nt) * C + c], d);
    atomicAdd(&dmelin_b[c], d);
}

// X (B*T, M): row (b,t) holds the mel projection's input at a mel position (the previous
// frame, mel_start for the first), zeros elsewhere; dmelin_w (C,M) += dout^T X then is one
// product instead of B*T*C*M atomics
__global__ void k_melin_inputs(float *X, batch_dev bt, const float *mel_start, int M) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)bt.B * bt.T * M) return;
    int k = (int)(idx % M), t = (int)((idx / M) % bt.T), b = (int)(idx / ((size_t)M * bt.T));
    int nt = bt.n_text[b], nf = bt.n_frames[b];
    float v = 0.0f;
    if (nf > 0 && t >= nt && t < nt + nf) {
        int j = t - nt;
        v = j == 0 ? mel_start[k] : bt.mel[((size_t)b * bt.mel_stride + (j - 1)) * M + k];
    }
    X[idx] = v;
}

// dmel_start (M) += melin_w^T dout at each row's first mel position (one thread per k)
__global__ void k_mel_start_bwd(float *dmel_start, const float *dout, batch_dev bt, const float *melin_w, int C, int M) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= M) return;
    float s = 0.0f;
    for (int b = 0; b < bt.B; b++) {
        int nt = bt.n_text[b], nf = bt.n_frames[b];
        if (nf == 0) continue;
        const float *d = dout + ((size_t)b * bt.T + nt) * C;
        for (int c = 0; c < C; c++) s += d[c] * melin_w[(size_t)c * M + k];
    }
    dmel_start[k] += s;
}

// one warp per row
__global__ void k_layernorm_fwd(float *out, float *mean, float *rstd, const float *inp, const float *w,
                                const float *bias, int N, int C) {
    size_t row = warp_row();
    int lane = lane_id();
    if (row >= (size_t)N) return;
    const float *x = inp + row * C;
    float s = 0.0f;
    for (int i = lane; i < C; i += 32) s += x[i];
    float m = warp_sum(s) / C;
    float v = 0.0f;
    for (int i = lane; i < C; i += 32) v += (x[i] - m) * (x[i] - m);
    v = warp_sum(v) / C;
    float r = 1.0f / sqrtf(v + 1e-5f);
    float *o = out + row * C;
    for (int i = lane; i < C; i += 32) o[i] = (r * (x[i] - m)) * w[i] + bias[i];
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

// one warp per row
__global__ void k_layernorm_bwd_inp(float *dinp, const float *dout, const float *inp, const float *w,
                                    const float *mean, const float *rstd, int N, int C) {
    size_t row = warp_row();
    int lane = lane_id();
    if (row >= (size_t)N) return;
    const float *d = dout + row * C, *x = inp + row * C;
    float m = mean[row], s = rstd[row], dm = 0.0f, dnm = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float dn = w[i] * d[i];
        dm += dn;
        dnm += dn * (x[i] - m) * s;
    }
    dm = warp_sum(dm) / C;
    dnm = warp_sum(dnm) / C;
    float *di = dinp + row * C;
    for (int i = lane; i < C; i += 32) {
        float norm = (x[i] - m) * s;
        di[i] += (w[i] * d[i] - dm - norm * dnm) * s;
    }
}

// Column sums over N rows of C in two deterministic passes. Pass one: block (x, y) sums
// columns 32x.. of the rows of row block y into partial[y*C + c] (threads along x read
// consecutive columns; the 8 threads along y take every 8th row, added in a fixed order).
// With inp, also the layer norm's weight gradient sum of (inp - mean) * rstd * dout.
const int CS_Y = 8;
__global__ void k_colsum_partial(float *pw, float *pb, const float *dout, const float *inp, const float *mean,
                                 const float *rstd, int N, int C, int rows_per) {
    __shared__ float shb[CS_Y][33], shw[CS_Y][33];
    int tx = threadIdx.x, ty = threadIdx.y, c = blockIdx.x * 32 + tx;
    int r0 = blockIdx.y * rows_per, r1 = min(N, r0 + rows_per);
    float sb = 0.0f, sw = 0.0f;
    if (c < C)
        for (int r = r0 + ty; r < r1; r += CS_Y) {
            float d = dout[(size_t)r * C + c];
            sb += d;
            if (inp) sw += (inp[(size_t)r * C + c] - mean[r]) * rstd[r] * d;
        }
    shb[ty][tx] = sb;
    shw[ty][tx] = sw;
    __syncthreads();
    if (ty != 0 || c >= C) return;
    for (int k = 1; k < CS_Y; k++) sb += shb[k][tx], sw += shw[k][tx];
    pb[(size_t)blockIdx.y * C + c] = sb;
    if (pw) pw[(size_t)blockIdx.y * C + c] = sw;
}

// pass two: the partials of each column in row-block order, added into db (and dw)
__global__ void k_colsum_final(float *dw, float *db, const float *pw, const float *pb, int nblocks, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float sb = 0.0f, sw = 0.0f;
    for (int y = 0; y < nblocks; y++) {
        sb += pb[(size_t)y * C + c];
        if (pw) sw += pw[(size_t)y * C + c];
    }
    db[c] += sb;
    if (dw) dw[c] += sw;
}

__global__ void k_bias_fill(float *out, const float *bias, size_t N, int OC) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx < N * OC) out[idx] = bias ? bias[idx % OC] : 0.0f;
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

// dq, dk, dv (B,NH,T,hs) -> dqkv (B,T,3C) (each element written once)
__global__ void k_unpermute_qkv(float *dqkv, const float *dq, const float *dk, const float *dv, int B, int T, int NH,
                                int hs) {
    size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (idx >= (size_t)B * NH * T * hs) return;
    int i = (int)(idx % hs), t = (int)((idx / hs) % T), h = (int)((idx / ((size_t)hs * T)) % NH);
    int b = (int)(idx / ((size_t)hs * T * NH));
    int C = NH * hs;
    size_t dst = ((size_t)b * T + t) * 3 * C + (size_t)h * hs + i;
    dqkv[dst] = dq[idx];
    dqkv[dst + C] = dk[idx];
    dqkv[dst + 2 * C] = dv[idx];
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

// causal softmax of each row of att (B*NH*T rows of T), scaled; zeros above the diagonal.
// One warp per row; each lane only reads back what it wrote. With p16, the probabilities
// rounded to bf16 too (the operand of the next product in bf16 mode).
__global__ void k_softmax_causal(float *att, bf16 *p16, int rows, int T, float scale) {
    size_t r = warp_row();
    int lane = lane_id();
    if (r >= (size_t)rows) return;
    int t = (int)(r % T);
    float *row = att + r * T;
    float mx = -INFINITY;
    for (int t2 = lane; t2 <= t; t2 += 32) {
        float x = row[t2] * scale;
        row[t2] = x;
        mx = fmaxf(mx, x);
    }
    mx = warp_max(mx);
    float sum = 0.0f;
    for (int t2 = lane; t2 <= t; t2 += 32) {
        float e = xtts_exp(row[t2] - mx);
        row[t2] = e;
        sum += e;
    }
    float inv = 1.0f / warp_sum(sum);
    for (int t2 = lane; t2 < T; t2 += 32) {
        float p = t2 <= t ? row[t2] * inv : 0.0f;
        row[t2] = p;
        if (p16) p16[r * T + t2] = __float2bfloat16(p);
    }
}

// datt -> dpre in place: P * (dP - sum(P dP)) * scale; one warp per row (and a bf16 copy)
__global__ void k_softmax_bwd(float *datt, bf16 *d16, const float *att, int rows, int T, float scale) {
    size_t r = warp_row();
    int lane = lane_id();
    if (r >= (size_t)rows) return;
    int t = (int)(r % T);
    const float *p = att + r * T;
    float *g = datt + r * T;
    float dot = 0.0f;
    for (int t2 = lane; t2 <= t; t2 += 32) dot += p[t2] * g[t2];
    dot = warp_sum(dot);
    for (int t2 = lane; t2 < T; t2 += 32) {
        float v = t2 <= t ? p[t2] * (g[t2] - dot) * scale : 0.0f;
        g[t2] = v;
        if (d16) d16[r * T + t2] = __float2bfloat16(v);
    }
}

__global__ void k_to_bf16(bf16 *dst, const float *src, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __float2bfloat16(src[i]);
}

__global__ void k_gelu_fwd(float *out, const float *inp, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) out[i] = xtts_gelu(inp[i]);
}

// dinp = gelu'(inp) * dout (written, not added: the buffer is the step's own)
__global__ void k_gelu_bwd(float *dinp, const float *inp, const float *dout, size_t N) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < N) dinp[i] = xtts_gelu_grad(inp[i]) * dout[i];
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

// the loss parts of n positions summed in double by one block in a fixed order: out[0] L1,
// out[1] BCE
const int SUM_THREADS = 1024;
__global__ void k_sum_parts(double *out, const float *parts, size_t n) {
    __shared__ double sa[SUM_THREADS], sb[SUM_THREADS];
    double a = 0.0, b = 0.0;
    for (size_t i = threadIdx.x; i < n; i += SUM_THREADS) a += parts[2 * i], b += parts[2 * i + 1];
    sa[threadIdx.x] = a;
    sb[threadIdx.x] = b;
    __syncthreads();
    for (int w = SUM_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) sa[threadIdx.x] += sa[threadIdx.x + w], sb[threadIdx.x] += sb[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = sa[0], out[1] = sb[0];
}

// sum of squares per block (fixed grid), in double as the CPU's xtts_grad_norm (a thread
// adds some n / 65536 squares: 1,300 for 87 M parameters)
__global__ void k_sumsq(double *partial, const float *x, size_t n) {
    __shared__ double sh[THREADS];
    double s = 0.0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += (double)x[i] * x[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

// the norm from the partials in block order, and the clipping scale (xtts_grad_clip's rule):
// out[2] the norm, *scale what the gradients are multiplied by in the update
__global__ void k_norm_finish(double *out, float *scale, const double *partial, int nblocks, float clip) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    double sq = 0.0;
    for (int i = 0; i < nblocks; i++) sq += partial[i];
    float norm = (float)sqrt(sq);
    out[2] = norm;
    *scale = (clip > 0.0f && norm > clip && isfinite(norm)) ? clip / (norm + 1e-6f) : 1.0f;
}

__global__ void k_adamw(float *p, const float *g, float *m, float *v, size_t n, const float *grad_scale, float lr,
                        float b1, float b2, float eps, float wd, float b1c, float b2c) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = xtts_adamw_update(p[i], g[i] * *grad_scale, &m[i], &v[i], lr, b1, b2, eps, wd, b1c, b2c);
}

const int NORM_BLOCKS = 256;
const int COLSUM_MAX_BLOCKS = 1024;

}  // namespace

// ---- host ---------------------------------------------------------------------------------

struct xtts_cuda_trainer {
    xtts_model_config cfg;
    int B_max, T_max, text_stride_max, mel_stride_max;
    size_t P;
    size_t sizes[XTTS_NUM_PARAM_TENSORS];
    float stop_pos_weight;
    xtts_precision precision;
    cudaStream_t compute, copy;
    cudaEvent_t staged;
    cublasHandle_t blas;
    float *params, *grads, *m, *v;  // P each
    bf16 *params16;                 // bf16 mode: the parameters rounded, once a step
    float *acts;                    // activations, dense for the current (B,T)
    size_t acts_floats;
    float *scratch;                 // gradient scratch and attention temporaries
    size_t scratch_floats;
    bf16 *a16, *b16, *s16;          // bf16 mode: operands rounded for a product; (B,NH,T,T) probabilities
    size_t ab16_elems;
    float *parts;                   // loss parts (2 B T_max)
    double *norm_partial;           // norm partial sums (NORM_BLOCKS)
    float *colsum;                  // column-sum partials: 2 * COLSUM_MAX_BLOCKS * colsum_width
    size_t colsum_width;            // the widest matrix summed by columns: max(4C, M + 1)
    float *melin_x;                 // (B T_max, M) inputs of the mel projection
    double *sums;                   // device: L1 sum, BCE sum, gradient norm
    float *clip_scale;              // device: the clipping factor of this step
    double *host_sums;              // pinned copy of sums
    int *text, *n_text, *n_frames;  // staged batch
    float *mel;
    batch_dev bt;
    int frames;                     // real mel frames of the staged batch
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
        cublasStatus_t s_ = (call);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                      \
            return xtts_error_set(err, XTTS_EIO, "cublas: %s failed (status %d)", what, (int)s_); \
    } while (0)

static float *tensor(const xtts_cuda_trainer *t, float *mem, int i) {
    for (int k = 0; k < i; k++) mem += t->sizes[k];
    return mem;
}

// An operand of a product: fp32 data, and in bf16 mode its bf16 rounding when one is at hand
// (the parameters, rounded once a step; the attention probabilities and score gradients,
// rounded by the kernel that made them); elems is how many floats it spans, which are
// rounded into scratch when no bf16 copy is at hand.
struct operand {
    const float *f;
    const bf16 *h;
    int ld;
    long long stride;
    size_t elems;
};

static operand act(const float *f, int ld, size_t elems, long long stride = 0) {
    return operand{f, nullptr, ld, stride, elems};
}
static operand weight(const xtts_cuda_trainer *t, const float *w, int ld) {
    return operand{w, t->params16 ? t->params16 + (w - t->params) : nullptr, ld, 0, 0};
}

// C (m x n, column-major, ldc) = op(A) op(B) + beta C, over batch strided matrices, at the
// trainer's precision; fp32 forces fp32 products (a part the forward computes in fp32).
static xtts_status gemm(xtts_cuda_trainer *t, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                        operand A, operand B, float beta, float *C, int ldc, long long strideC, int batch,
                        const char *what, xtts_error *err, bool fp32 = false) {
    const float one = 1.0f;
    if (fp32 && t->precision != XTTS_PRECISION_FP32) {
        // float32 whatever the handle's math mode (TF32 would round the operands)
        BL(cublasGemmStridedBatchedEx(t->blas, ta, tb, m, n, k, &one, A.f, CUDA_R_32F, A.ld, A.stride, B.f, CUDA_R_32F,
                                      B.ld, B.stride, &beta, C, CUDA_R_32F, ldc, strideC, batch,
                                      CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT),
           what);
        return XTTS_OK;
    }
    if (t->precision != XTTS_PRECISION_BF16) {
        if (batch == 1)
            BL(cublasSgemm(t->blas, ta, tb, m, n, k, &one, A.f, A.ld, B.f, B.ld, &beta, C, ldc), what);
        else
            BL(cublasSgemmStridedBatched(t->blas, ta, tb, m, n, k, &one, A.f, A.ld, A.stride, B.f, B.ld, B.stride,
                                         &beta, C, ldc, strideC, batch),
               what);
        return XTTS_OK;
    }
    const bf16 *a = A.h, *b = B.h;
    if (!a) {
        if (A.elems > t->ab16_elems) return xtts_error_set(err, XTTS_EIO, "cuda: %s: operand larger than its buffer", what);
        k_to_bf16<<<blocks_for(A.elems), THREADS, 0, t->compute>>>(t->a16, A.f, A.elems);
        a = t->a16;
    }
    if (!b) {
        if (B.elems > t->ab16_elems) return xtts_error_set(err, XTTS_EIO, "cuda: %s: operand larger than its buffer", what);
        k_to_bf16<<<blocks_for(B.elems), THREADS, 0, t->compute>>>(t->b16, B.f, B.elems);
        b = t->b16;
    }
    BL(cublasGemmStridedBatchedEx(t->blas, ta, tb, m, n, k, &one, a, CUDA_R_16BF, A.ld, A.stride, b, CUDA_R_16BF, B.ld,
                                  B.stride, &beta, C, CUDA_R_32F, ldc, strideC, batch, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT_TENSOR_OP),
       what);
    return XTTS_OK;
}

// out (N,OC) = inp (N,C) . weight^T + bias
static xtts_status matmul_fwd(xtts_cuda_trainer *t, float *out, const float *inp, const float *w, const float *bias,
                              int N, int C, int OC, xtts_error *err) {
    k_bias_fill<<<blocks_for((size_t)N * OC), THREADS, 0, t->compute>>>(out, bias, (size_t)N, OC);
    return gemm(t, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, C, weight(t, w, C), act(inp, C, (size_t)N * C), 1.0f, out, OC, 0, 1,
                "matmul forward", err);
}

// column sums of x (N,C) added into db, and with inp (the layer norm's input) the weight
// gradient's sum of (inp - mean) * rstd * x into dw
static void colsum(xtts_cuda_trainer *t, float *dw, float *db, const float *x, const float *inp, const float *mean,
                   const float *rstd, int N, int C) {
    int rows_per = 64;
    if ((N + rows_per - 1) / rows_per > COLSUM_MAX_BLOCKS) rows_per = (N + COLSUM_MAX_BLOCKS - 1) / COLSUM_MAX_BLOCKS;
    int nb = (N + rows_per - 1) / rows_per;
    if (nb == 0) return;
    float *pb = t->colsum, *pw = inp ? t->colsum + (size_t)COLSUM_MAX_BLOCKS * t->colsum_width : nullptr;
    dim3 grid((C + 31) / 32, nb), block(32, CS_Y);
    k_colsum_partial<<<grid, block, 0, t->compute>>>(pw, pb, x, inp, mean, rstd, N, C, rows_per);
    k_colsum_final<<<blocks_for(C), THREADS, 0, t->compute>>>(dw, db, pw, pb, nb, C);
}

// dinp (N,C) += dout . weight; dweight (OC,C) += dout^T . inp; dbias += column sums
static xtts_status matmul_bwd(xtts_cuda_trainer *t, float *dinp, float *dw, float *db, const float *dout,
                              const float *inp, const float *w, int N, int C, int OC, xtts_error *err,
                              float dinp_beta = 1.0f) {
    xtts_status st = XTTS_OK;
    if (dinp)
        st = gemm(t, CUBLAS_OP_N, CUBLAS_OP_N, C, N, OC, weight(t, w, C), act(dout, OC, (size_t)N * OC), dinp_beta,
                  dinp, C, 0, 1, "matmul dinp", err);
    // in bf16 mode the dinp product left dout rounded in b16; the dweight product rounds inp
    // into a16 and reads that b16 again
    operand D = act(dout, OC, (size_t)N * OC);
    if (dinp && t->precision == XTTS_PRECISION_BF16) D.h = t->b16;
    if (!st) st = gemm(t, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, N, act(inp, C, (size_t)N * C), D, 1.0f, dw, C, 0, 1,
                       "matmul dweight", err);
    if (!st && db) colsum(t, nullptr, db, dout, nullptr, nullptr, nullptr, N, OC);
    return st;
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

extern "C" xtts_status xtts_cuda_trainer_new(const xtts_model *m, int ordinal, xtts_precision precision,
                                             xtts_cuda_trainer **out, xtts_error *err) {
    *out = nullptr;
    if (precision != XTTS_PRECISION_FP32 && precision != XTTS_PRECISION_TF32 && precision != XTTS_PRECISION_BF16)
        return xtts_error_set(err, XTTS_EUSAGE, "cuda: unknown precision %d", (int)precision);
    CU(cudaSetDevice(ordinal), "select device");
    xtts_cuda_trainer *t = new (std::nothrow) xtts_cuda_trainer();
    if (!t) return xtts_error_set(err, XTTS_ENOMEM, "cuda: out of host memory");
    t->cfg = m->config;
    t->precision = precision;
    t->B_max = m->B_max;
    t->T_max = m->T_max;
    t->P = m->num_parameters;
    t->stop_pos_weight = m->stop_pos_weight;
    for (int i = 0; i < XTTS_NUM_PARAM_TENSORS; i++) t->sizes[i] = m->param_sizes[i];
    t->text_stride_max = m->config.max_text_pos;
    t->mel_stride_max = m->config.max_mel_pos;
    t->acts_floats = layout(t->cfg, t->B_max, t->T_max, nullptr, nullptr, nullptr, nullptr, &t->scratch_floats);
    size_t M = (size_t)t->cfg.n_mels, B = (size_t)t->B_max, C = (size_t)t->cfg.channels;
    size_t BT = B * t->T_max;
    *out = t;  // from here on, xtts_cuda_trainer_delete frees what was made
    CU(cudaStreamCreateWithFlags(&t->compute, cudaStreamNonBlocking), "compute stream");
    CU(cudaStreamCreateWithFlags(&t->copy, cudaStreamNonBlocking), "copy stream");
    CU(cudaEventCreateWithFlags(&t->staged, cudaEventDisableTiming), "event");
    BL(cublasCreate(&t->blas), "create handle");
    BL(cublasSetStream(t->blas, t->compute), "set stream");
    BL(cublasSetMathMode(t->blas, precision == XTTS_PRECISION_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
       "set math mode");
    CU(cudaMalloc(&t->params, 4 * t->P), "parameters");
    CU(cudaMalloc(&t->grads, 4 * t->P), "gradients");
    CU(cudaMalloc(&t->m, 4 * t->P), "AdamW m");
    CU(cudaMalloc(&t->v, 4 * t->P), "AdamW v");
    CU(cudaMemset(t->m, 0, 4 * t->P), "AdamW m");
    CU(cudaMemset(t->v, 0, 4 * t->P), "AdamW v");
    CU(cudaMalloc(&t->acts, 4 * t->acts_floats), "activations");
    CU(cudaMalloc(&t->scratch, 4 * t->scratch_floats), "gradient scratch");
    if (precision == XTTS_PRECISION_BF16) {
        // the largest operand rounded on the fly: an activation or gradient of (B T, 4C)
        t->ab16_elems = BT * 4 * C > BT * (M + 1) ? BT * 4 * C : BT * (M + 1);
        CU(cudaMalloc(&t->params16, 2 * t->P), "bf16 parameters");
        CU(cudaMalloc(&t->a16, 2 * t->ab16_elems), "bf16 operands");
        CU(cudaMalloc(&t->b16, 2 * t->ab16_elems), "bf16 operands");
        CU(cudaMalloc(&t->s16, 2 * B * t->cfg.n_head * (size_t)t->T_max * t->T_max), "bf16 attention");
    }
    CU(cudaMalloc(&t->parts, 4 * 2 * BT), "loss parts");
    CU(cudaMalloc(&t->norm_partial, sizeof(double) * NORM_BLOCKS), "norm");
    t->colsum_width = 4 * C > M + 1 ? 4 * C : M + 1;
    CU(cudaMalloc(&t->colsum, 4 * 2 * (size_t)COLSUM_MAX_BLOCKS * t->colsum_width), "column sums");
    CU(cudaMalloc(&t->melin_x, 4 * BT * M), "mel inputs");
    CU(cudaMalloc(&t->sums, 3 * sizeof(double)), "sums");
    CU(cudaMalloc(&t->clip_scale, sizeof(float)), "clip scale");
    CU(cudaMallocHost(&t->host_sums, 3 * sizeof(double)), "pinned sums");
    CU(cudaMalloc(&t->text, 4 * B * t->text_stride_max), "batch text");
    CU(cudaMalloc(&t->n_text, 4 * B), "batch lengths");
    CU(cudaMalloc(&t->n_frames, 4 * B), "batch lengths");
    CU(cudaMalloc(&t->mel, 4 * B * t->mel_stride_max * M), "batch mel");
    CU(cudaMemcpy(t->params, m->params_memory, 4 * t->P, cudaMemcpyHostToDevice), "upload parameters");
    // the clears and copies above ran on the legacy stream, which the non-blocking compute
    // stream does not wait for (and a pageable copy may return before its transfer ends)
    CU(cudaDeviceSynchronize(), "finish the upload");
    return XTTS_OK;
}

extern "C" void xtts_cuda_trainer_delete(xtts_cuda_trainer *t) {
    if (!t) return;
    if (t->compute) cudaStreamSynchronize(t->compute);
    if (t->copy) cudaStreamSynchronize(t->copy);
    void *bufs[] = {t->params, t->grads,   t->m,        t->v,    t->params16,   t->acts,       t->scratch,
                    t->a16,    t->b16,     t->s16,      t->parts, t->norm_partial, t->colsum, t->melin_x,
                    t->sums,   t->clip_scale, t->text,  t->n_text, t->n_frames, t->mel};
    for (void *b : bufs)
        if (b) cudaFree(b);
    if (t->host_sums) cudaFreeHost(t->host_sums);
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
    CU(cudaStreamSynchronize(t->compute), "finish the step");
    CU(cudaMemcpy(t->params, params, 4 * t->P, cudaMemcpyHostToDevice), "upload parameters");
    CU(cudaMemcpy(t->m, m, 4 * t->P, cudaMemcpyHostToDevice), "upload AdamW m");
    CU(cudaMemcpy(t->v, v, 4 * t->P, cudaMemcpyHostToDevice), "upload AdamW v");
    CU(cudaDeviceSynchronize(), "finish the upload");  // see xtts_cuda_trainer_new
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
    // the frames the losses are averaged over, from the host's lengths (no device round trip)
    t->frames = 0;
    for (int b = 0; b < bt->B; b++) t->frames += bt->n_frames[b];
    return XTTS_OK;
}

static xtts_status forward(xtts_cuda_trainer *t, acts_view &a, scratch_view &s, xtts_error *err) {
    const xtts_model_config &c = t->cfg;
    int B = t->bt.B, T = t->bt.T, L = c.n_layer, C = c.channels, NH = c.n_head, M = c.n_mels, hs = C / NH;
    size_t BT = (size_t)B * T, TT = (size_t)T * T, BHTT = (size_t)B * NH * TT;
    float *p = t->params;
    CU(cudaStreamWaitEvent(t->compute, t->staged, 0), "wait for the batch");
    if (t->params16) k_to_bf16<<<blocks_for(t->P), THREADS, 0, t->compute>>>(t->params16, p, t->P);
    k_encoder_fwd<<<blocks_for(BT * C), THREADS, 0, t->compute>>>(a.encoded, t->bt, tensor(t, p, 0), tensor(t, p, 1),
                                                                  tensor(t, p, 2), tensor(t, p, 3), tensor(t, p, 4),
                                                                  tensor(t, p, 5), C, M);
    const float scale = 1.0f / sqrtf((float)hs);
    const long long sq = (long long)T * hs;
    for (int l = 0; l < L; l++) {
        const float *res = l == 0 ? a.encoded : a.residual3 + (size_t)(l - 1) * BT * C;
        float *ln1 = a.ln1 + l * BT * C, *qkv = a.qkv + l * BT * 3 * C, *atty = a.atty + l * BT * C;
        float *att = a.att + (size_t)l * BHTT, *res2 = a.residual2 + l * BT * C, *ln2 = a.ln2 + l * BT * C;
        float *fch = a.fch + l * BT * 4 * C, *fchg = a.fch_gelu + l * BT * 4 * C, *res3 = a.residual3 + l * BT * C;
        k_layernorm_fwd<<<row_blocks(BT), THREADS, 0, t->compute>>>(ln1, a.ln1_mean + l * BT, a.ln1_rstd + l * BT, res,
                                                                     tensor(t, p, 6) + l * C, tensor(t, p, 7) + l * C,
                                                                     (int)BT, C);
        xtts_status st = matmul_fwd(t, qkv, ln1, tensor(t, p, 8) + (size_t)l * 3 * C * C, tensor(t, p, 9) + l * 3 * C,
                                    (int)BT, C, 3 * C, err);
        if (st) return st;
        size_t nq = (size_t)B * NH * T * hs;
        k_permute<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.q, s.k, s.v, qkv, B, T, NH, hs);
        // att (T,T) per (b,h) = q k^T
        st = gemm(t, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, act(s.k, hs, nq, sq), act(s.q, hs, nq, sq), 0.0f, att, T,
                  (long long)TT, B * NH, "attention scores", err);
        if (st) return st;
        k_softmax_causal<<<row_blocks((size_t)B * NH * T), THREADS, 0, t->compute>>>(att, t->s16, B * NH * T, T, scale);
        // y (T,hs) = att v
        operand P = act(att, T, BHTT, (long long)TT);
        P.h = t->s16;
        st = gemm(t, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, act(s.v, hs, nq, sq), P, 0.0f, s.y, hs, sq, B * NH,
                  "attention values", err);
        if (st) return st;
        k_unpermute<<<blocks_for(nq), THREADS, 0, t->compute>>>(atty, s.y, B, T, NH, hs);
        st = matmul_fwd(t, s.tmp, atty, tensor(t, p, 10) + (size_t)l * C * C, tensor(t, p, 11) + l * C, (int)BT, C, C,
                        err);
        if (st) return st;
        k_residual<<<blocks_for(BT * C), THREADS, 0, t->compute>>>(res2, res, s.tmp, BT * C);
        k_layernorm_fwd<<<row_blocks(BT), THREADS, 0, t->compute>>>(ln2, a.ln2_mean + l * BT, a.ln2_rstd + l * BT, res2,
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
    k_layernorm_fwd<<<row_blocks(BT), THREADS, 0, t->compute>>>(a.lnf, a.lnf_mean, a.lnf_rstd,
                                                                 a.residual3 + (size_t)(L - 1) * BT * C,
                                                                 tensor(t, p, 18), tensor(t, p, 19), (int)BT, C);
    return matmul_fwd(t, a.head, a.lnf, tensor(t, p, 20), tensor(t, p, 21), (int)BT, C, M + 1, err);
}

// the loss parts and (with dhead) their gradients, summed on the device into t->sums[0..1]
static void losses(xtts_cuda_trainer *t, const acts_view &a, float *dhead) {
    int M = t->cfg.n_mels, frames = t->frames;
    size_t BT = (size_t)t->bt.B * t->bt.T;
    float mel_scale = frames ? 1.0f / ((float)frames * M) : 0.0f, stop_scale = frames ? 1.0f / frames : 0.0f;
    k_loss<<<blocks_for(BT), THREADS, 0, t->compute>>>(t->parts, dhead, a.head, t->bt, M, t->stop_pos_weight, mel_scale,
                                                       stop_scale);
    k_sum_parts<<<1, SUM_THREADS, 0, t->compute>>>(t->sums, t->parts, BT);
}

// copy the sums back (the step's one wait) and turn them into the reported losses
static xtts_status read_sums(xtts_cuda_trainer *t, int n, float *loss, float *mel_loss, float *stop_loss,
                             xtts_error *err) {
    CU(cudaMemcpyAsync(t->host_sums, t->sums, n * sizeof(double), cudaMemcpyDeviceToHost, t->compute), "losses");
    CU(cudaStreamSynchronize(t->compute), "losses");
    int frames = t->frames, M = t->cfg.n_mels;
    *mel_loss = frames ? (float)(t->host_sums[0] / ((double)frames * M)) : 0.0f;
    *stop_loss = frames ? (float)(t->host_sums[1] / frames) : 0.0f;
    *loss = *mel_loss + *stop_loss;
    return XTTS_OK;
}

// after a failed call: let what was queued finish, so that the caller may reuse the batch's
// host buffers (the error itself is kept)
static xtts_status drained(xtts_cuda_trainer *t, xtts_status st) {
    if (st) {
        cudaStreamSynchronize(t->compute);
        cudaStreamSynchronize(t->copy);
    }
    return st;
}

static xtts_status forward_only(xtts_cuda_trainer *t, float *loss, float *mel_loss, float *stop_loss, int *frames,
                                xtts_error *err);
static xtts_status step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o, float *loss,
                        float *mel_loss, float *stop_loss, float *grad_norm, xtts_error *err);

extern "C" xtts_status xtts_cuda_trainer_forward(xtts_cuda_trainer *t, float *loss, float *mel_loss, float *stop_loss,
                                                 int *frames, xtts_error *err) {
    return drained(t, forward_only(t, loss, mel_loss, stop_loss, frames, err));
}

extern "C" xtts_status xtts_cuda_trainer_step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o,
                                              float *loss, float *mel_loss, float *stop_loss, float *grad_norm,
                                              xtts_error *err) {
    return drained(t, step(t, t_step, lr, o, loss, mel_loss, stop_loss, grad_norm, err));
}

static xtts_status forward_only(xtts_cuda_trainer *t, float *loss, float *mel_loss, float *stop_loss, int *frames,
                                xtts_error *err) {
    acts_view a;
    scratch_view s;
    layout(t->cfg, t->bt.B, t->bt.T, t->acts, &a, t->scratch, &s, nullptr);
    xtts_status st = forward(t, a, s, err);
    if (st) return st;
    losses(t, a, nullptr);
    *frames = t->frames;
    return read_sums(t, 2, loss, mel_loss, stop_loss, err);
}

// The encoder's gradients from the residual stream's (dres, (B,T,C)): the embeddings by
// atomics; the mel projection's weight as one product over the rows' input frames (fp32, as
// its forward); the learned first frame.
static xtts_status encoder_bwd(xtts_cuda_trainer *t, const float *dres, xtts_error *err) {
    int C = t->cfg.channels, M = t->cfg.n_mels;
    size_t BT = (size_t)t->bt.B * t->bt.T;
    float *p = t->params, *g = t->grads;
    k_encoder_bwd<<<blocks_for(BT * C), THREADS, 0, t->compute>>>(tensor(t, g, 0), tensor(t, g, 1), tensor(t, g, 2),
                                                                  tensor(t, g, 4), dres, t->bt, C);
    k_melin_inputs<<<blocks_for(BT * M), THREADS, 0, t->compute>>>(t->melin_x, t->bt, tensor(t, p, 5), M);
    xtts_status st = gemm(t, CUBLAS_OP_N, CUBLAS_OP_T, M, C, (int)BT, act(t->melin_x, M, BT * M), act(dres, C, BT * C),
                          1.0f, tensor(t, g, 3), M, 0, 1, "mel projection dweight", err, true);
    if (st) return st;
    k_mel_start_bwd<<<blocks_for(M), THREADS, 0, t->compute>>>(tensor(t, g, 5), dres, t->bt, tensor(t, p, 3), C, M);
    return XTTS_OK;
}

static xtts_status step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o, float *loss,
                        float *mel_loss, float *stop_loss, float *grad_norm, xtts_error *err) {
    const xtts_model_config &c = t->cfg;
    int B = t->bt.B, T = t->bt.T, L = c.n_layer, C = c.channels, NH = c.n_head, M = c.n_mels, hs = C / NH;
    size_t BT = (size_t)B * T, TT = (size_t)T * T, BHTT = (size_t)B * NH * TT, nq = (size_t)B * NH * T * hs;
    const long long sq = (long long)T * hs;
    acts_view a;
    scratch_view s;
    layout(c, B, T, t->acts, &a, t->scratch, &s, nullptr);
    xtts_status st = forward(t, a, s, err);
    if (st) return st;
    losses(t, a, s.dhead);

    float *p = t->params, *g = t->grads;
    const float scale = 1.0f / sqrtf((float)hs);
    CU(cudaMemsetAsync(g, 0, 4 * t->P, t->compute), "zero gradients");
    st = matmul_bwd(t, s.dln, tensor(t, g, 20), tensor(t, g, 21), s.dhead, a.lnf, tensor(t, p, 20), (int)BT, C, M + 1,
                    err, 0.0f);
    if (st) return st;
    CU(cudaMemsetAsync(s.dresidual, 0, 4 * BT * C, t->compute), "scratch");
    const float *last = a.residual3 + (size_t)(L - 1) * BT * C;
    k_layernorm_bwd_inp<<<row_blocks(BT), THREADS, 0, t->compute>>>(s.dresidual, s.dln, last, tensor(t, p, 18),
                                                                     a.lnf_mean, a.lnf_rstd, (int)BT, C);
    colsum(t, tensor(t, g, 18), tensor(t, g, 19), s.dln, last, a.lnf_mean, a.lnf_rstd, (int)BT, C);
    for (int l = L - 1; l >= 0; l--) {
        const float *res = l == 0 ? a.encoded : a.residual3 + (size_t)(l - 1) * BT * C;
        const float *ln1 = a.ln1 + l * BT * C, *qkv = a.qkv + l * BT * 3 * C, *atty = a.atty + l * BT * C;
        const float *att = a.att + (size_t)l * BHTT, *res2 = a.residual2 + l * BT * C;
        const float *ln2 = a.ln2 + l * BT * C, *fch = a.fch + l * BT * 4 * C, *fchg = a.fch_gelu + l * BT * 4 * C;
        st = matmul_bwd(t, s.dfch_gelu, tensor(t, g, 16) + (size_t)l * C * 4 * C, tensor(t, g, 17) + l * C,
                        s.dresidual, fchg, tensor(t, p, 16) + (size_t)l * C * 4 * C, (int)BT, 4 * C, C, err, 0.0f);
        if (st) return st;
        k_gelu_bwd<<<blocks_for(BT * 4 * C), THREADS, 0, t->compute>>>(s.dfch, fch, s.dfch_gelu, BT * 4 * C);
        st = matmul_bwd(t, s.dln, tensor(t, g, 14) + (size_t)l * 4 * C * C, tensor(t, g, 15) + l * 4 * C, s.dfch, ln2,
                        tensor(t, p, 14) + (size_t)l * 4 * C * C, (int)BT, C, 4 * C, err, 0.0f);
        if (st) return st;
        k_layernorm_bwd_inp<<<row_blocks(BT), THREADS, 0, t->compute>>>(s.dresidual, s.dln, res2,
                                                                         tensor(t, p, 12) + l * C, a.ln2_mean + l * BT,
                                                                         a.ln2_rstd + l * BT, (int)BT, C);
        colsum(t, tensor(t, g, 12) + l * C, tensor(t, g, 13) + l * C, s.dln, res2, a.ln2_mean + l * BT,
               a.ln2_rstd + l * BT, (int)BT, C);
        st = matmul_bwd(t, s.datty, tensor(t, g, 10) + (size_t)l * C * C, tensor(t, g, 11) + l * C, s.dresidual, atty,
                        tensor(t, p, 10) + (size_t)l * C * C, (int)BT, C, C, err, 0.0f);
        if (st) return st;
        // attention: recompute q, k, v for this layer, then the four products
        k_permute<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.q, s.k, s.v, qkv, B, T, NH, hs);
        k_permute_grad<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.y, s.datty, B, T, NH, hs);  // dy
        // datt (T,T) = dy v^T
        st = gemm(t, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, act(s.v, hs, nq, sq), act(s.y, hs, nq, sq), 0.0f, s.datt, T,
                  (long long)TT, B * NH, "attention datt", err);
        if (st) return st;
        // dv (T,hs) = att^T dy; in bf16 mode the probabilities are rounded again into s16
        operand P = act(att, T, BHTT, (long long)TT);
        if (t->s16) {
            k_to_bf16<<<blocks_for(BHTT), THREADS, 0, t->compute>>>(t->s16, att, BHTT);
            P.h = t->s16;
        }
        st = gemm(t, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, act(s.y, hs, nq, sq), P, 0.0f, s.dv, hs, sq, B * NH,
                  "attention dv", err);
        if (st) return st;
        k_softmax_bwd<<<row_blocks((size_t)B * NH * T), THREADS, 0, t->compute>>>(s.datt, t->s16, att, B * NH * T, T,
                                                                                   scale);
        // dq (T,hs) = dpre k ; dk (T,hs) = dpre^T q
        operand dS = act(s.datt, T, BHTT, (long long)TT);
        dS.h = t->s16;
        st = gemm(t, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, act(s.k, hs, nq, sq), dS, 0.0f, s.dq, hs, sq, B * NH,
                  "attention dq", err);
        if (!st)
            st = gemm(t, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, act(s.q, hs, nq, sq), dS, 0.0f, s.dk, hs, sq, B * NH,
                      "attention dk", err);
        if (st) return st;
        k_unpermute_qkv<<<blocks_for(nq), THREADS, 0, t->compute>>>(s.dqkv, s.dq, s.dk, s.dv, B, T, NH, hs);
        st = matmul_bwd(t, s.dln, tensor(t, g, 8) + (size_t)l * 3 * C * C, tensor(t, g, 9) + l * 3 * C, s.dqkv, ln1,
                        tensor(t, p, 8) + (size_t)l * 3 * C * C, (int)BT, C, 3 * C, err, 0.0f);
        if (st) return st;
        k_layernorm_bwd_inp<<<row_blocks(BT), THREADS, 0, t->compute>>>(s.dresidual, s.dln, res,
                                                                         tensor(t, p, 6) + l * C, a.ln1_mean + l * BT,
                                                                         a.ln1_rstd + l * BT, (int)BT, C);
        colsum(t, tensor(t, g, 6) + l * C, tensor(t, g, 7) + l * C, s.dln, res, a.ln1_mean + l * BT,
               a.ln1_rstd + l * BT, (int)BT, C);
    }
    st = encoder_bwd(t, s.dresidual, err);
    if (st) return st;

    // global norm and clipping on the device, folded into AdamW
    k_sumsq<<<NORM_BLOCKS, THREADS, 0, t->compute>>>(t->norm_partial, g, t->P);
    k_norm_finish<<<1, 32, 0, t->compute>>>(t->sums, t->clip_scale, t->norm_partial, NORM_BLOCKS, o->clip);
    float b1c = 1.0f - powf(o->beta1, (float)t_step), b2c = 1.0f - powf(o->beta2, (float)t_step);
    k_adamw<<<blocks_for(t->P), THREADS, 0, t->compute>>>(p, g, t->m, t->v, t->P, t->clip_scale, lr, o->beta1, o->beta2,
                                                         o->eps, o->weight_decay, b1c, b2c);
    CU(cudaGetLastError(), "launch");
    st = read_sums(t, 3, loss, mel_loss, stop_loss, err);
    if (st) return st;
    *grad_norm = (float)t->host_sums[2];
    return XTTS_OK;
}
