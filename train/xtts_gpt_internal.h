/* xtts_gpt_internal.h — the state of train/xtts_gpt.c's model shared by its files: the tensor
 * table and where each group of tensors starts, the batch as GPT.forward rebuilds it (inputs,
 * targets, masks), and the activations kept for the backward. Not installed. */
#ifndef XTTS_TRAIN_XTTS_GPT_INTERNAL_H
#define XTTS_TRAIN_XTTS_GPT_INTERNAL_H

#include "train/xtts_gpt.h"

#define XTTS_GPT_COND_BLOCKS 6     /* ConditioningEncoder's attn_blocks */
#define XTTS_GPT_LATENTS 32        /* PerceiverResampler's num_latents */
#define XTTS_GPT_PERC_DEPTH 2      /* its depth */
#define XTTS_GPT_PERC_HEADS 8      /* its heads */
#define XTTS_GPT_PERC_DIM_HEAD 64  /* its dim_head */
#define XTTS_GPT_NAME_MAX 96

/* Forward activations, (B, ...) time-major; arrays of K (conditioning blocks), PD (perceiver
 * layers) or L (GPT-2 layers) buffers. */
typedef struct {
    float *xin;                                  /* (B,S,n_mels) the conditioning mel, transposed */
    float *ce_h[XTTS_GPT_COND_BLOCKS + 1];       /* (B,S,D) block inputs; [K] the encoder's output */
    float *ce_n[XTTS_GPT_COND_BLOCKS];           /* (B,S,D) group-normed */
    float *ce_mean[XTTS_GPT_COND_BLOCKS], *ce_rstd[XTTS_GPT_COND_BLOCKS]; /* (B,G) */
    float *ce_qkv[XTTS_GPT_COND_BLOCKS];         /* (B,S,3D) */
    float *ce_att[XTTS_GPT_COND_BLOCKS];         /* (B,H,S,S) */
    float *ce_a[XTTS_GPT_COND_BLOCKS];           /* (B,S,D) attention output */
    float *pv_lat[XTTS_GPT_PERC_DEPTH + 1];      /* (B,P,D) latents into each layer; [PD] out */
    float *pv_ctx[XTTS_GPT_PERC_DEPTH];          /* (B,P+S,D) [latents ; encoder output] */
    float *pv_q[XTTS_GPT_PERC_DEPTH];            /* (B,P,512) */
    float *pv_kv[XTTS_GPT_PERC_DEPTH];           /* (B,P+S,1024) */
    float *pv_att[XTTS_GPT_PERC_DEPTH];          /* (B,8,P,P+S) */
    float *pv_o[XTTS_GPT_PERC_DEPTH];            /* (B,P,512) */
    float *pv_mid[XTTS_GPT_PERC_DEPTH];          /* (B,P,D) latents after the attention */
    float *pv_f1[XTTS_GPT_PERC_DEPTH];           /* (B,P,2I) */
    float *pv_g[XTTS_GPT_PERC_DEPTH];            /* (B,P,I) */
    float *pv_inv;                               /* (B*P) RMS norm's inverse norms */
    float *cond;                                 /* (B,P,D) conditioning latents */
    float **x;                                   /* L+1 of (B,T,D): the residual stream */
    float **ln1, **ln1_m, **ln1_r, **qkv, **att, **atty, **xmid, **ln2, **ln2_m, **ln2_r, **fc, **fcg;
    float *lnf, *lnf_m, *lnf_r;                  /* (B,T,D), (B*T) */
    float *fn, *fn_m, *fn_r;                     /* (B,Tt+Tm,D) final_norm, (B*(Tt+Tm)) */
    float *lg_text, *lg_mel;                     /* (B,Tt,NT), (B,Tm,NA) */
    float *mha_scratch;                          /* the attentions' per-thread scratch */
} xtts_gpt_acts;

/* Gradients of the activations: the running ones and per-layer scratch. */
typedef struct {
    float *lg_text, *lg_mel, *fn, *lnf, *x;      /* as in xtts_gpt_acts; x is (B,T,D) */
    float *ln, *qkv, *atty, *fc, *fcg;           /* one GPT-2 layer's, reused */
    float *cond, *lat, *mid, *f1, *g, *o, *q, *kv, *ctx; /* the perceiver's */
    float *h, *n, *ce_qkv, *ce_a, *xin;          /* the conditioning encoder's */
} xtts_gpt_dacts;

struct xtts_gpt {
    xtts_gpt_config c;
    int G, I;                       /* group-norm groups; the perceiver's feed-forward width */
    xtts_gpt_tensor *t;
    char (*names)[XTTS_GPT_NAME_MAX];
    size_t nt, cap_t, nparams;
    float *params, *grads;
    /* first tensor of each group, in GPT's state-dict order */
    size_t ix_ce, ix_temb, ix_memb, ix_gpt, ix_lnf, ix_mpos, ix_tpos, ix_fin, ix_thead, ix_mhead, ix_perc;
    /* the last batch */
    int B, S, Tt, Tm, T;
    int32_t *text_in, *text_tgt, *mel_in, *mel_tgt; /* (B,Tt), (B,Tm) */
    uint8_t *key_mask;                              /* (B,T) */
    float *arena, *darena, **layer_ptrs;
    size_t arena_n, darena_n;
    int shape_B, shape_S, shape_Tt, shape_Tm;       /* the shape the arenas were laid out for */
    int mha_threads;                                /* threads the attention scratch is for */
    xtts_gpt_acts a;
    xtts_gpt_dacts d;
};

/* pointers to tensor i's values and gradient */
static inline float *xtts_gpt_w(xtts_gpt *m, size_t i) { return m->params + m->t[i].offset; }
static inline float *xtts_gpt_g(xtts_gpt *m, size_t i) { return m->grads + m->t[i].offset; }

/* Lays out the arenas for the batch shape in m (B, S, Tt, Tm): XTTS_ENOMEM. */
xtts_status xtts_gpt_acts_ensure(xtts_gpt *m, xtts_error *err);

#endif
