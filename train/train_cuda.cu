// train_cuda.cu — the xtts-train step on a CUDA device (train/train_cuda.h): the spine that
// orchestrates the layers of train/cuda/, in the order of train/model.c's CPU spine and in the
// manner of llm.c's train_gpt2.cu. It reads top to bottom: the trainer's state (the model's
// parameters, gradients, AdamW moments and activations on the device), its lifecycle and the
// batch's copy in, then forward, backward and the update, and the step that runs them.
//
// The layers, one file per kind, each owning its kernels and launchers (every launcher takes
// the stream and returns without waiting):
//   cuda/common.cuh     launch shapes, warp reductions, the batch on the device, column sums
//   cuda/matmul.cuh     cuBLAS products at the trainer's precision, the linear layer
//   cuda/encoder.cuh    tokens, positions and the mel frame projection in
//   cuda/layernorm.cuh  layer normalization
//   cuda/attention.cuh  causal multi-head self-attention
//   cuda/gelu.cuh       GELU and the residual sum
//   cuda/loss.cuh       the mel L1 and stop BCE, summed on the device
//   cuda/adamw.cuh      the gradient norm, clipping and AdamW
// Per-element math is train/train_math.h, which the CPU loops (train/cpu/) compile too.
//
// A step launches everything without waiting and synchronizes once, at its end, to read three
// numbers (the losses' sums and the gradient norm). Precision: cuda/matmul.cuh. The host glue
// here only allocates, copies and launches.
#include "train/train_cuda.h"

#include "train/cuda/adamw.cuh"
#include "train/cuda/attention.cuh"
#include "train/cuda/common.cuh"
#include "train/cuda/encoder.cuh"
#include "train/cuda/gelu.cuh"
#include "train/cuda/layernorm.cuh"
#include "train/cuda/loss.cuh"
#include "train/cuda/matmul.cuh"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

// ---- the trainer's state ---------------------------------------------------------------------

struct xtts_cuda_trainer {
    xtts_model_config cfg;
    int B_max, T_max, text_stride_max, mel_stride_max;
    size_t P;
    size_t sizes[XTTS_NUM_PARAM_TENSORS];
    float stop_pos_weight;
    cudaStream_t compute, copy;
    cudaEvent_t staged;
    matmul_ctx mm;                  // the products' handle, precision and bf16 buffers (cuda/matmul.cuh)
    float *params, *grads, *m, *v;  // P each
    float *acts;                    // activations, dense for the current (B,T)
    size_t acts_floats;
    float *scratch;                 // gradient scratch and attention temporaries
    size_t scratch_floats;
    bf16 *s16;                      // bf16 mode: (B,NH,T,T) attention probabilities or score gradients
    float *parts;                   // loss parts (2 B T_max)
    double *norm_partial;           // norm partial sums (NORM_BLOCKS)
    colsum_buf colsum;              // column-sum partials: 2 * COLSUM_MAX_BLOCKS * max(4C, M + 1)
    float *melin_x;                 // (B T_max, M) inputs of the mel projection
    double *sums;                   // device: L1 sum, BCE sum, gradient norm
    float *clip_scale;              // device: the clipping factor of this step
    double *host_sums;              // pinned copy of sums
    int *text, *n_text, *n_frames;  // staged batch
    float *mel;
    batch_dev bt;
    int frames;                     // real mel frames of the staged batch
};

// parameter (or gradient) tensor i of train/model.h's layout inside mem
static float *tensor(const xtts_cuda_trainer *t, float *mem, int i) {
    for (int k = 0; k < i; k++) mem += t->sizes[k];
    return mem;
}

// The activations are train/model.h's (shapes there). The gradient scratch is model.h's too
// (one layer's worth, reused layer after layer), and the device's own buffers besides.
typedef xtts_activations acts_view;
struct scratch_view {
    float *dresidual, *dhead, *dln, *datty, *dqkv, *dfch, *dfch_gelu;  // as xtts_grad_scratch
    float *tmp;                                                        // (B,T,C) a projection before its residual sum
    attention_scratch att;                                             // cuda/attention.cuh
};

// Lays the activations and the scratch out densely for (B,T) from a_base and s_base (each view
// NULL to only count); returns the activations' floats, *scratch_floats the scratch's.
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
    TAKE(s->att.q, BT * C);
    TAKE(s->att.k, BT * C);
    TAKE(s->att.v, BT * C);
    TAKE(s->att.y, BT * C);
    TAKE(s->att.dq, BT * C);
    TAKE(s->att.dk, BT * C);
    TAKE(s->att.dv, BT * C);
    TAKE(s->att.datt, (size_t)B * NH * TT);
#undef TAKE
    if (scratch_floats) *scratch_floats = n;
    return acts;
}

// ---- lifecycle and the batch ------------------------------------------------------------------

extern "C" xtts_status xtts_cuda_trainer_new(const xtts_model *m, int ordinal, xtts_precision precision,
                                             xtts_cuda_trainer **out, xtts_error *err) {
    *out = nullptr;
    if (precision != XTTS_PRECISION_FP32 && precision != XTTS_PRECISION_TF32 && precision != XTTS_PRECISION_BF16)
        return xtts_error_set(err, XTTS_EUSAGE, "cuda: unknown precision %d", (int)precision);
    CU(cudaSetDevice(ordinal), "select device");
    xtts_cuda_trainer *t = new (std::nothrow) xtts_cuda_trainer();
    if (!t) return xtts_error_set(err, XTTS_ENOMEM, "cuda: out of host memory");
    t->cfg = m->config;
    t->mm.precision = precision;
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
    t->mm.stream = t->compute;
    BL(cublasCreate(&t->mm.blas), "create handle");
    BL(cublasSetStream(t->mm.blas, t->compute), "set stream");
    BL(cublasSetMathMode(t->mm.blas, precision == XTTS_PRECISION_TF32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
       "set math mode");
    CU(cudaMalloc(&t->params, 4 * t->P), "parameters");
    t->mm.params = t->params;
    CU(cudaMalloc(&t->grads, 4 * t->P), "gradients");
    CU(cudaMalloc(&t->m, 4 * t->P), "AdamW m");
    CU(cudaMalloc(&t->v, 4 * t->P), "AdamW v");
    CU(cudaMemset(t->m, 0, 4 * t->P), "AdamW m");
    CU(cudaMemset(t->v, 0, 4 * t->P), "AdamW v");
    CU(cudaMalloc(&t->acts, 4 * t->acts_floats), "activations");
    CU(cudaMalloc(&t->scratch, 4 * t->scratch_floats), "gradient scratch");
    if (precision == XTTS_PRECISION_BF16) {
        // the largest operand rounded on the fly: an activation or gradient of (B T, 4C)
        t->mm.ab16_elems = BT * 4 * C > BT * (M + 1) ? BT * 4 * C : BT * (M + 1);
        CU(cudaMalloc(&t->mm.params16, 2 * t->P), "bf16 parameters");
        CU(cudaMalloc(&t->mm.a16, 2 * t->mm.ab16_elems), "bf16 operands");
        CU(cudaMalloc(&t->mm.b16, 2 * t->mm.ab16_elems), "bf16 operands");
        CU(cudaMalloc(&t->s16, 2 * B * t->cfg.n_head * (size_t)t->T_max * t->T_max), "bf16 attention");
    }
    CU(cudaMalloc(&t->parts, 4 * 2 * BT), "loss parts");
    CU(cudaMalloc(&t->norm_partial, sizeof(double) * NORM_BLOCKS), "norm");
    t->colsum.width = 4 * C > M + 1 ? 4 * C : M + 1;
    CU(cudaMalloc(&t->colsum.partial, 4 * 2 * (size_t)COLSUM_MAX_BLOCKS * t->colsum.width), "column sums");
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
    void *bufs[] = {t->params,  t->grads,       t->m,         t->v,       t->mm.params16,  t->acts,
                    t->scratch, t->mm.a16,      t->mm.b16,    t->s16,     t->parts,        t->norm_partial,
                    t->colsum.partial, t->melin_x, t->sums,   t->clip_scale, t->text,      t->n_text,
                    t->n_frames, t->mel};
    for (void *b : bufs)
        if (b) cudaFree(b);
    if (t->host_sums) cudaFreeHost(t->host_sums);
    if (t->mm.blas) cublasDestroy(t->mm.blas);
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


// ---- forward ----------------------------------------------------------------------------------

// The model's forward pass on the staged batch into the activations (train/model.c's order).
static xtts_status forward(xtts_cuda_trainer *t, acts_view &a, scratch_view &s, xtts_error *err) {
    const xtts_model_config &c = t->cfg;
    int B = t->bt.B, T = t->bt.T, L = c.n_layer, C = c.channels, NH = c.n_head, M = c.n_mels;
    size_t BT = (size_t)B * T, BHTT = (size_t)B * NH * T * T;
    float *p = t->params;
    cudaStream_t stream = t->compute;
    CU(cudaStreamWaitEvent(t->compute, t->staged, 0), "wait for the batch");
    if (t->mm.params16) k_to_bf16<<<blocks_for(t->P), THREADS, 0, stream>>>(t->mm.params16, p, t->P);
    encoder_forward(stream, a.encoded, t->bt, tensor(t, p, 0), tensor(t, p, 1), tensor(t, p, 2), tensor(t, p, 3),
                    tensor(t, p, 4), tensor(t, p, 5), C, M);
    for (int l = 0; l < L; l++) {
        const float *res = l == 0 ? a.encoded : a.residual3 + (size_t)(l - 1) * BT * C;
        float *ln1 = a.ln1 + l * BT * C, *qkv = a.qkv + l * BT * 3 * C, *atty = a.atty + l * BT * C;
        float *att = a.att + (size_t)l * BHTT, *res2 = a.residual2 + l * BT * C, *ln2 = a.ln2 + l * BT * C;
        float *fch = a.fch + l * BT * 4 * C, *fchg = a.fch_gelu + l * BT * 4 * C, *res3 = a.residual3 + l * BT * C;
        layernorm_forward(stream, ln1, a.ln1_mean + l * BT, a.ln1_rstd + l * BT, res, tensor(t, p, 6) + l * C,
                          tensor(t, p, 7) + l * C, (int)BT, C);
        xtts_status st = matmul_forward(t->mm, qkv, ln1, tensor(t, p, 8) + (size_t)l * 3 * C * C,
                                        tensor(t, p, 9) + l * 3 * C, (int)BT, C, 3 * C, err);
        if (!st) st = attention_forward(t->mm, atty, att, t->s16, qkv, s.att, B, T, C, NH, err);
        if (!st)
            st = matmul_forward(t->mm, s.tmp, atty, tensor(t, p, 10) + (size_t)l * C * C, tensor(t, p, 11) + l * C,
                                (int)BT, C, C, err);
        if (st) return st;
        residual_forward(stream, res2, res, s.tmp, BT * C);
        layernorm_forward(stream, ln2, a.ln2_mean + l * BT, a.ln2_rstd + l * BT, res2, tensor(t, p, 12) + l * C,
                          tensor(t, p, 13) + l * C, (int)BT, C);
        st = matmul_forward(t->mm, fch, ln2, tensor(t, p, 14) + (size_t)l * 4 * C * C, tensor(t, p, 15) + l * 4 * C,
                            (int)BT, C, 4 * C, err);
        if (st) return st;
        gelu_forward(stream, fchg, fch, BT * 4 * C);
        st = matmul_forward(t->mm, s.tmp, fchg, tensor(t, p, 16) + (size_t)l * C * 4 * C, tensor(t, p, 17) + l * C,
                            (int)BT, 4 * C, C, err);
        if (st) return st;
        residual_forward(stream, res3, res2, s.tmp, BT * C);
    }
    layernorm_forward(stream, a.lnf, a.lnf_mean, a.lnf_rstd, a.residual3 + (size_t)(L - 1) * BT * C, tensor(t, p, 18),
                      tensor(t, p, 19), (int)BT, C);
    return matmul_forward(t->mm, a.head, a.lnf, tensor(t, p, 20), tensor(t, p, 21), (int)BT, C, M + 1, err);
}

// the loss parts and (with dhead) their gradients, summed on the device into t->sums[0..1]
static void losses(xtts_cuda_trainer *t, const acts_view &a, float *dhead) {
    loss_forward_backward(t->compute, t->sums, t->parts, dhead, a.head, t->bt, t->frames, t->cfg.n_mels,
                          t->stop_pos_weight);
}

// ---- backward ---------------------------------------------------------------------------------

// The gradients of every parameter, written into t->grads, from the head's (s.dhead) back
// through the layers to the encoder (train/model.c's order).
static xtts_status backward(xtts_cuda_trainer *t, const acts_view &a, scratch_view &s, xtts_error *err) {
    const xtts_model_config &c = t->cfg;
    int B = t->bt.B, T = t->bt.T, L = c.n_layer, C = c.channels, NH = c.n_head, M = c.n_mels;
    size_t BT = (size_t)B * T, BHTT = (size_t)B * NH * T * T;
    float *p = t->params, *g = t->grads;
    cudaStream_t stream = t->compute;
    CU(cudaMemsetAsync(g, 0, 4 * t->P, stream), "zero gradients");
    xtts_status st = matmul_backward(t->mm, t->colsum, s.dln, tensor(t, g, 20), tensor(t, g, 21), s.dhead, a.lnf,
                                     tensor(t, p, 20), (int)BT, C, M + 1, err, 0.0f);
    if (st) return st;
    CU(cudaMemsetAsync(s.dresidual, 0, 4 * BT * C, stream), "scratch");
    layernorm_backward(stream, t->colsum, s.dresidual, tensor(t, g, 18), tensor(t, g, 19), s.dln,
                       a.residual3 + (size_t)(L - 1) * BT * C, tensor(t, p, 18), a.lnf_mean, a.lnf_rstd, (int)BT, C);
    for (int l = L - 1; l >= 0; l--) {
        const float *res = l == 0 ? a.encoded : a.residual3 + (size_t)(l - 1) * BT * C;
        const float *ln1 = a.ln1 + l * BT * C, *qkv = a.qkv + l * BT * 3 * C, *atty = a.atty + l * BT * C;
        const float *att = a.att + (size_t)l * BHTT, *res2 = a.residual2 + l * BT * C;
        const float *ln2 = a.ln2 + l * BT * C, *fch = a.fch + l * BT * 4 * C, *fchg = a.fch_gelu + l * BT * 4 * C;
        // residual3 = residual2 + fcproj: dresidual flows to both
        st = matmul_backward(t->mm, t->colsum, s.dfch_gelu, tensor(t, g, 16) + (size_t)l * C * 4 * C,
                             tensor(t, g, 17) + l * C, s.dresidual, fchg, tensor(t, p, 16) + (size_t)l * C * 4 * C,
                             (int)BT, 4 * C, C, err, 0.0f);
        if (st) return st;
        gelu_backward(stream, s.dfch, fch, s.dfch_gelu, BT * 4 * C);
        st = matmul_backward(t->mm, t->colsum, s.dln, tensor(t, g, 14) + (size_t)l * 4 * C * C,
                             tensor(t, g, 15) + l * 4 * C, s.dfch, ln2, tensor(t, p, 14) + (size_t)l * 4 * C * C,
                             (int)BT, C, 4 * C, err, 0.0f);
        if (st) return st;
        layernorm_backward(stream, t->colsum, s.dresidual, tensor(t, g, 12) + l * C, tensor(t, g, 13) + l * C, s.dln,
                           res2, tensor(t, p, 12) + l * C, a.ln2_mean + l * BT, a.ln2_rstd + l * BT, (int)BT, C);
        // residual2 = residual + attproj
        st = matmul_backward(t->mm, t->colsum, s.datty, tensor(t, g, 10) + (size_t)l * C * C, tensor(t, g, 11) + l * C,
                             s.dresidual, atty, tensor(t, p, 10) + (size_t)l * C * C, (int)BT, C, C, err, 0.0f);
        if (!st) st = attention_backward(t->mm, s.dqkv, s.datty, qkv, att, t->s16, s.att, B, T, C, NH, err);
        if (!st)
            st = matmul_backward(t->mm, t->colsum, s.dln, tensor(t, g, 8) + (size_t)l * 3 * C * C,
                                 tensor(t, g, 9) + l * 3 * C, s.dqkv, ln1, tensor(t, p, 8) + (size_t)l * 3 * C * C,
                                 (int)BT, C, 3 * C, err, 0.0f);
        if (st) return st;
        layernorm_backward(stream, t->colsum, s.dresidual, tensor(t, g, 6) + l * C, tensor(t, g, 7) + l * C, s.dln, res,
                           tensor(t, p, 6) + l * C, a.ln1_mean + l * BT, a.ln1_rstd + l * BT, (int)BT, C);
    }
    return encoder_backward(t->mm, tensor(t, g, 0), tensor(t, g, 1), tensor(t, g, 2), tensor(t, g, 3),
                            tensor(t, g, 4), tensor(t, g, 5), t->melin_x, s.dresidual, t->bt, tensor(t, p, 5),
                            tensor(t, p, 3), C, M, err);
}

// ---- the step ---------------------------------------------------------------------------------

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

// forward and the loss (validation)
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

// forward, the loss and its gradient, backward, and the update (clipping folded into AdamW)
static xtts_status step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o, float *loss,
                        float *mel_loss, float *stop_loss, float *grad_norm, xtts_error *err) {
    acts_view a;
    scratch_view s;
    layout(t->cfg, t->bt.B, t->bt.T, t->acts, &a, t->scratch, &s, nullptr);
    xtts_status st = forward(t, a, s, err);
    if (st) return st;
    losses(t, a, s.dhead);
    st = backward(t, a, s, err);
    if (st) return st;
    adamw_update(t->compute, t->params, t->grads, t->m, t->v, t->P, t->norm_partial, t->sums, t->clip_scale, t_step,
                 lr, o);
    CU(cudaGetLastError(), "launch");
    st = read_sums(t, 3, loss, mel_loss, stop_loss, err);
    if (st) return st;
    *grad_norm = (float)t->host_sums[2];
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

extern "C" xtts_status xtts_cuda_trainer_forward(xtts_cuda_trainer *t, float *loss, float *mel_loss, float *stop_loss,
                                                 int *frames, xtts_error *err) {
    return drained(t, forward_only(t, loss, mel_loss, stop_loss, frames, err));
}

extern "C" xtts_status xtts_cuda_trainer_step(xtts_cuda_trainer *t, long t_step, float lr, const xtts_optim_config *o,
                                              float *loss, float *mel_loss, float *stop_loss, float *grad_norm,
                                              xtts_error *err) {
    return drained(t, step(t, t_step, lr, o, loss, mel_loss, stop_loss, grad_norm, err));
}
