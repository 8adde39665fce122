// cuda/encoder.cuh — the input layer on the device (train/cpu/encoder.h on the CPU): text tokens
// and their positions, the previous mel frame projected to the model's width plus the mel
// positions. One thread per output element forward. Backward: the embedding tables' gradients
// by atomics (a token or position appears in several rows: not bit-reproducible, unlike the
// CPU), the projection's weight gradient as one fp32 product over the rows' input frames, and
// the learned first frame's by one thread per mel channel.
#ifndef XTTS_TRAIN_CUDA_ENCODER_CUH
#define XTTS_TRAIN_CUDA_ENCODER_CUH

#include "train/cuda/common.cuh"
#include "train/cuda/matmul.cuh"

namespace {

// out (B,T,C); as encoder_forward of train/cpu/encoder.h, one thread per element
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

// out is (B,T,C); wte (V + N_LANGS, C), wpe_text (Pt, C), wpe_mel (Pm, C), melin_w (C, M),
// melin_b (C), mel_start (M) as in train/model.h
void encoder_forward(cudaStream_t stream, float *out, batch_dev bt, const float *wte, const float *wpe_text,
                     const float *wpe_mel, const float *melin_w, const float *melin_b, const float *mel_start, int C,
                     int M) {
    size_t BT = (size_t)bt.B * bt.T;
    k_encoder_fwd<<<blocks_for(BT * C), THREADS, 0, stream>>>(out, bt, wte, wpe_text, wpe_mel, melin_w, melin_b,
                                                               mel_start, C, M);
}

// The encoder's gradients from the residual stream's (dout, (B,T,C)), added into the tables'
// (shapes as encoder_forward's); melin_x is (B*T, M) scratch for the projection's inputs.
xtts_status encoder_backward(const matmul_ctx &mc, float *dwte, float *dwpe_text, float *dwpe_mel, float *dmelin_w,
                             float *dmelin_b, float *dmel_start, float *melin_x, const float *dout, batch_dev bt,
                             const float *mel_start, const float *melin_w, int C, int M, xtts_error *err) {
    size_t BT = (size_t)bt.B * bt.T;
    k_encoder_bwd<<<blocks_for(BT * C), THREADS, 0, mc.stream>>>(dwte, dwpe_text, dwpe_mel, dmelin_b, dout, bt, C);
    k_melin_inputs<<<blocks_for(BT * M), THREADS, 0, mc.stream>>>(melin_x, bt, mel_start, M);
    xtts_status st = gemm(mc, CUBLAS_OP_N, CUBLAS_OP_T, M, C, (int)BT, act(melin_x, M, BT * M), act(dout, C, BT * C),
                          1.0f, dmelin_w, M, 0, 1, "mel projection dweight", err, true);
    if (st) return st;
    k_mel_start_bwd<<<blocks_for(M), THREADS, 0, mc.stream>>>(dmel_start, dout, bt, melin_w, C, M);
    return XTTS_OK;
}

}  // namespace

#endif
