// cuda/attention.cuh — causal multi-head self-attention on the device (train/cpu/attention.h on
// the CPU). q, k, v are permuted from (B,T,3C) to (B,NH,T,hs), the products are cuBLAS's
// strided-batched ones over (b,h) (cuda/matmul.cuh), with a causal softmax kernel between them
// (one warp per row, xtts_exp of train/train_math.h); the (B,NH,T,T) probabilities are kept for
// the backward pass, which permutes q, k, v again rather than keeping them. In bf16 mode the
// softmax kernels leave the bf16 copy of what they made for the product that reads it.
#ifndef XTTS_TRAIN_CUDA_ATTENTION_CUH
#define XTTS_TRAIN_CUDA_ATTENTION_CUH

#include "train/cuda/common.cuh"
#include "train/cuda/matmul.cuh"
#include "train/train_math.h"

namespace {

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

// The buffers attention works in: q, k, v, y (dy backward), dq, dk, dv are (B,NH,T,hs), datt
// is (B,NH,T,T).
struct attention_scratch {
    float *q, *k, *v, *y, *dq, *dk, *dv, *datt;
};

// qkv is (B,T,3C) holding q,k,v; att is (B,NH,T,T), the probabilities (zeros above the
// diagonal); out is (B,T,C). att16 (B,NH,T,T): bf16 mode's rounded probabilities (else NULL).
xtts_status attention_forward(const matmul_ctx &mc, float *out, float *att, bf16 *att16, const float *qkv,
                              const attention_scratch &s, int B, int T, int C, int NH, xtts_error *err) {
    int hs = C / NH;
    size_t TT = (size_t)T * T, BHTT = (size_t)B * NH * TT, nq = (size_t)B * NH * T * hs;
    const long long sq = (long long)T * hs;
    const float scale = 1.0f / sqrtf((float)hs);
    k_permute<<<blocks_for(nq), THREADS, 0, mc.stream>>>(s.q, s.k, s.v, qkv, B, T, NH, hs);
    // att (T,T) per (b,h) = q k^T
    xtts_status st = gemm(mc, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, act(s.k, hs, nq, sq), act(s.q, hs, nq, sq), 0.0f,
                          att, T, (long long)TT, B * NH, "attention scores", err);
    if (st) return st;
    k_softmax_causal<<<row_blocks((size_t)B * NH * T), THREADS, 0, mc.stream>>>(att, att16, B * NH * T, T, scale);
    // y (T,hs) = att v
    operand P = act(att, T, BHTT, (long long)TT);
    P.h = att16;
    st = gemm(mc, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, act(s.v, hs, nq, sq), P, 0.0f, s.y, hs, sq, B * NH,
              "attention values", err);
    if (st) return st;
    k_unpermute<<<blocks_for(nq), THREADS, 0, mc.stream>>>(out, s.y, B, T, NH, hs);
    return XTTS_OK;
}

// dqkv is (B,T,3C), written (not added); dout is (B,T,C); qkv and att as attention_forward's
// (att16 rewritten in bf16 mode).
xtts_status attention_backward(const matmul_ctx &mc, float *dqkv, const float *dout, const float *qkv,
                               const float *att, bf16 *att16, const attention_scratch &s, int B, int T, int C, int NH,
                               xtts_error *err) {
    int hs = C / NH;
    size_t TT = (size_t)T * T, BHTT = (size_t)B * NH * TT, nq = (size_t)B * NH * T * hs;
    const long long sq = (long long)T * hs;
    const float scale = 1.0f / sqrtf((float)hs);
    // recompute q, k, v for this layer, then the four products
    k_permute<<<blocks_for(nq), THREADS, 0, mc.stream>>>(s.q, s.k, s.v, qkv, B, T, NH, hs);
    k_permute_grad<<<blocks_for(nq), THREADS, 0, mc.stream>>>(s.y, dout, B, T, NH, hs);  // dy
    // datt (T,T) = dy v^T
    xtts_status st = gemm(mc, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, act(s.v, hs, nq, sq), act(s.y, hs, nq, sq), 0.0f,
                          s.datt, T, (long long)TT, B * NH, "attention datt", err);
    if (st) return st;
    // dv (T,hs) = att^T dy; in bf16 mode the probabilities are rounded again into att16
    operand P = act(att, T, BHTT, (long long)TT);
    if (att16) {
        k_to_bf16<<<blocks_for(BHTT), THREADS, 0, mc.stream>>>(att16, att, BHTT);
        P.h = att16;
    }
    st = gemm(mc, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, act(s.y, hs, nq, sq), P, 0.0f, s.dv, hs, sq, B * NH,
              "attention dv", err);
    if (st) return st;
    k_softmax_bwd<<<row_blocks((size_t)B * NH * T), THREADS, 0, mc.stream>>>(s.datt, att16, att, B * NH * T, T, scale);
    // dq (T,hs) = dpre k ; dk (T,hs) = dpre^T q
    operand dS = act(s.datt, T, BHTT, (long long)TT);
    dS.h = att16;
    st = gemm(mc, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, act(s.k, hs, nq, sq), dS, 0.0f, s.dq, hs, sq, B * NH,
              "attention dq", err);
    if (!st)
        st = gemm(mc, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, act(s.q, hs, nq, sq), dS, 0.0f, s.dk, hs, sq, B * NH,
                  "attention dk", err);
    if (st) return st;
    k_unpermute_qkv<<<blocks_for(nq), THREADS, 0, mc.stream>>>(dqkv, s.dq, s.dk, s.dv, B, T, NH, hs);
    return XTTS_OK;
}

}  // namespace

#endif
