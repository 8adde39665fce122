/* langid.c — language identification among XTTS's 17 languages (see langid.h). */
#include "prep/text/langid/langid.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "common/xtts_common.h"
#include "prep/text/langid/langid_model.h"

enum { EN, ES, FR, DE, IT, PT, PL, TR, RU, NL, CS, AR, ZH, HU, KO, JA, HI };

/* CLD2 codes that stand for an XTTS language: itself, or a close relative CLD2 confuses it
 * with on short text. */
static const struct { const char *cld2; int lang; } cld2_map[] = {
    {"en", EN}, {"es", ES}, {"fr", FR}, {"de", DE}, {"it", IT}, {"pt", PT}, {"pl", PL}, {"tr", TR}, {"ru", RU},
    {"nl", NL}, {"cs", CS}, {"ar", AR}, {"zh", ZH}, {"zh-Hant", ZH}, {"hu", HU}, {"ko", KO}, {"ja", JA}, {"hi", HI},
    {"gl", ES}, {"ca", ES}, {"ast", ES}, {"sk", CS}, {"af", NL}, {"fy", NL}, {"lb", DE}, {"la", IT}, {"co", IT},
    {"oc", FR}, {"uk", RU}, {"be", RU}, {"bg", RU}, {"mr", HI}, {"ne", HI}, {"fa", AR}, {"ur", AR}, {"az", TR},
};

/* The most frequent function words of each Latin-script language, chosen to be rare in the
 * others. Lowercase, NFC. */
static const char *const stopwords[][48] = {
    [EN] = {"the", "and", "of", "to", "is", "in", "that", "it", "was", "for", "with", "he", "she", "you", "are", "this",
            "be", "have", "not", "they", "we", "his", "her", "my", "what", "i", "at", "by", "from", "will", "would",
            "there", "their", "been", "has", "do", "an", "can", "me", NULL},
    [ES] = {"el", "la", "los", "las", "de", "que", "y", "en", "un", "una", "es", "por", "con", "para", "del", "se",
            "lo", "su", "al", "como", "pero", "muy", "está", "yo", "hay", "más", "ella", "tiene", "son", "mi", "qué",
            "cómo", "no", "estoy", "hoy", "ayer", "nos", "esta", "este", "día", "buenos", "gracias", NULL},
    [FR] = {"le", "la", "les", "des", "est", "et", "un", "une", "du", "que", "qui", "dans", "pour", "pas", "au", "sur",
            "ce", "il", "elle", "je", "nous", "vous", "avec", "mais", "sont", "ne", "aux", "ont", "été", "très", "c'est",
            "j'ai", "où", "cette", "mon", "suis", "fait", "ils", "à", NULL},
    [DE] = {"der", "die", "das", "und", "ist", "nicht", "ein", "eine", "ich", "zu", "den", "mit", "sich", "auf", "für",
            "es", "im", "dem", "von", "sie", "wir", "auch", "aber", "wie", "noch", "nach", "bei", "sehr", "heute",
            "hat", "haben", "wird", "war", "kann", "mein", "sind", "einen", "uns", "gut", NULL},
    [IT] = {"il", "di", "che", "è", "e", "la", "per", "un", "una", "non", "sono", "del", "della", "gli", "le", "con",
            "mi", "ho", "ha", "lo", "si", "da", "nel", "alla", "anche", "ma", "come", "questo", "molto", "oggi",
            "sei", "io", "ci", "abbiamo", "tutti", "loro", "siamo", "dove", "perché", "domani", "ieri", "stasera", "grazie", NULL},
    [PT] = {"o", "a", "os", "as", "de", "que", "e", "do", "da", "em", "um", "uma", "é", "não", "para", "com", "por",
            "no", "na", "se", "mais", "mas", "dos", "das", "ao", "ele", "ela", "eu", "você", "muito", "está", "são",
            "foi", "tem", "hoje", "isso", "meu", "minha", "nós", "dia", "bom", "boa", "obrigado", NULL},
    [PL] = {"i", "w", "nie", "na", "się", "z", "jest", "to", "że", "do", "jak", "ale", "co", "tak", "od", "po", "za",
            "czy", "już", "jestem", "mam", "bardzo", "ja", "ty", "dzisiaj", "jutro", "był", "była", "są", "mój", NULL},
    [TR] = {"bir", "ve", "bu", "da", "de", "için", "ile", "çok", "ne", "var", "ben", "sen", "o", "mi", "değil", "gibi",
            "daha", "ama", "yok", "bugün", "şimdi", "nasıl", "neden", "evet", "hayır", NULL},
    [NL] = {"de", "het", "een", "en", "van", "is", "dat", "niet", "ik", "je", "op", "te", "zijn", "met", "voor", "er",
            "maar", "ook", "wat", "hij", "zij", "we", "heb", "heeft", "naar", "nog", "kan", "als", "bij", "uit",
            "dit", "deze", "mijn", "wordt", "geen", "om", "vandaag", "ze", NULL},
    [CS] = {"a", "je", "se", "v", "na", "to", "že", "s", "z", "do", "jsem", "není", "jak", "ale", "tak", "by", "jsou",
            "už", "co", "pro", "od", "po", "byl", "byla", "mám", "dnes", "velmi", "také", "jsme", "můj", NULL},
    [HU] = {"a", "az", "és", "hogy", "nem", "egy", "van", "meg", "ez", "csak", "már", "mint", "volt",
            "ha", "én", "nagyon", "vagyok", "itt", "ott", "ma", "holnap", "igen", "kell", "lesz", NULL},
};

static int is_latin_lang(int l) { return l == EN || l == ES || l == FR || l == DE || l == IT || l == PT || l == PL || l == TR || l == NL || l == CS || l == HU; }

/* The stopword lists as one hash table: word -> bit mask of languages. Built once. */
#define SW_SLOTS 2048
static struct { const char *word; uint32_t langs; } sw_table[SW_SLOTS];
static pthread_once_t sw_once = PTHREAD_ONCE_INIT;

static size_t sw_slot(const char *w, size_t n) {
    uint64_t h = XTTS_FNV64_INIT; /* xtts_fnv1a64, inline */
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)w[i]) * 0x100000001b3ULL;
    return h & (SW_SLOTS - 1);
}

static void sw_build(void) {
    for (int l = 0; l < XTTS_N_LANGS; l++) {
        if (l >= (int)(sizeof stopwords / sizeof stopwords[0])) break;
        for (int w = 0; stopwords[l][w]; w++) {
            size_t n = strlen(stopwords[l][w]), i = sw_slot(stopwords[l][w], n);
            while (sw_table[i].word && strcmp(sw_table[i].word, stopwords[l][w])) i = (i + 1) & (SW_SLOTS - 1);
            sw_table[i].word = stopwords[l][w];
            sw_table[i].langs |= 1u << l;
        }
    }
}

static uint32_t sw_lookup(const char *w, size_t n) {
    size_t i = sw_slot(w, n);
    while (sw_table[i].word) {
        if (!strncmp(sw_table[i].word, w, n) && sw_table[i].word[n] == 0) return sw_table[i].langs;
        i = (i + 1) & (SW_SLOTS - 1);
    }
    return 0;
}

/* Count function-word hits per language among the text's words (lowercased). */
static void word_votes(const char *text, size_t len, int votes[XTTS_N_LANGS]) {
    memset(votes, 0, sizeof(int) * XTTS_N_LANGS);
    pthread_once(&sw_once, sw_build);
    char word[64];
    size_t wl = 0;
    size_t i = 0;
    for (;;) {
        int32_t cp = 0;
        utf8proc_ssize_t k = 0;
        int end = i >= len, letter = 0;
        if (!end && (uint8_t)text[i] < 0x80) { /* ASCII: letters and the apostrophe */
            cp = (uint8_t)text[i];
            k = 1;
            letter = (uint32_t)((cp | 0x20) - 'a') < 26 || cp == '\'';
        } else if (!end) {
            k = utf8proc_iterate((const uint8_t *)text + i, (utf8proc_ssize_t)(len - i), &cp);
            if (k <= 0) { k = 1; cp = ' '; }
            utf8proc_category_t cat = utf8proc_category(cp);
            letter = (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) || cat == UTF8PROC_CATEGORY_MN;
        }
        if (letter && cp < 0x80) {
            if (wl + 1 < sizeof word) word[wl++] = (char)(cp == '\'' ? cp : cp | 0x20);
        } else if (letter) {
            uint8_t enc[4];
            utf8proc_ssize_t el = utf8proc_encode_char(utf8proc_tolower(cp), enc);
            if (wl + (size_t)el < sizeof word) { memcpy(word + wl, enc, (size_t)el); wl += (size_t)el; }
        } else if (wl) {
            uint32_t m = sw_lookup(word, wl);
            for (int l = 0; m && l < XTTS_N_LANGS; l++)
                if (m & (1u << l)) votes[l]++;
            wl = 0;
        }
        if (end) break;
        i += (size_t)k;
    }
}


/* Weights of the evidence for Latin-script text, in nats. The n-gram log-likelihood is
 * damped because the five orders at one position are far from independent. */
static const double P_NGRAM = 0.15, P_LETTERS = 4.0, P_CLD2 = 3.0, P_WORDS = 1.0;
/* the score gap given to languages the writing system rules out */
#define LANGID_IMPOSSIBLE 100.0


static double logsumexp(const double *s, int n) {
    double m = s[0];
    for (int i = 1; i < n; i++) if (s[i] > m) m = s[i];
    double t = 0;
    for (int i = 0; i < n; i++) t += exp(s[i] - m);
    return m + log(t);
}

/* Scores to log-posteriors under a uniform prior; best, sure. */
static void finish(xtts_langid_result *r, const double *s, const char *method) {
    double z = logsumexp(s, XTTS_N_LANGS);
    int best = 0;
    for (int l = 0; l < XTTS_N_LANGS; l++) {
        r->score[l] = s[l] - z;
        if (r->score[l] > r->score[best]) best = l;
    }
    double second = -1e300;
    for (int l = 0; l < XTTS_N_LANGS; l++)
        if (l != best && r->score[l] > second) second = r->score[l];
    r->lang = best;
    r->sure = r->score[best] - second >= XTTS_LANGID_SURE;
    r->method = method;
    r->open = 0;
}

static void script_decides(xtts_langid_result *r, int lang) {
    double s[XTTS_N_LANGS];
    for (int l = 0; l < XTTS_N_LANGS; l++) s[l] = l == lang ? 0 : -LANGID_IMPOSSIBLE;
    finish(r, s, "script");
}

/* The lead of the best score over the second. */
static double lead(const double *s) {
    int best = 0;
    for (int l = 1; l < XTTS_N_LANGS; l++)
        if (s[l] > s[best]) best = l;
    double second = -1e300;
    for (int l = 0; l < XTTS_N_LANGS; l++)
        if (l != best && s[l] > second) second = s[l];
    return s[best] - second;
}

/* quick: leave CLD2 out when the rest of the evidence leads by QUICK_LEAD or more. Its
 * bonus (at most P_CLD2, to one language) can then neither change the best language nor
 * bring the lead under XTTS_LANGID_SURE: lang and sure are those of the full scores. */
#define QUICK_LEAD (XTTS_LANGID_SURE + 4.0)

static void detect(const char *text, size_t len, xtts_langid_result *r, int quick) {
    r->lang = -1;
    r->sure = 0;
    r->method = "none";
    r->open = 0;
    for (int l = 0; l < XTTS_N_LANGS; l++) r->score[l] = 0;
    /* writing systems and unique letters */
    int hangul = 0, kana = 0, han = 0, arabic = 0, deva = 0, cyr = 0, latin = 0, letters = 0;
    int uniq[XTTS_N_LANGS] = {0}, inverted = 0;
    for (size_t i = 0; i < len;) {
        if ((uint8_t)text[i] < 0x80) { /* ASCII: only the letters count, all Latin */
            int a = (uint8_t)text[i++] | 0x20;
            if (a >= 'a' && a <= 'z') letters++, latin++;
            continue;
        }
        int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate((const uint8_t *)text + i, (utf8proc_ssize_t)(len - i), &c);
        if (k <= 0) { i++; continue; }
        i += (size_t)k;
        if (c == 0xBF || c == 0xA1) inverted = 1; /* ¿ ¡ */
        utf8proc_category_t cat = utf8proc_category(c);
        if (!(cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO)) continue;
        letters++;
        if ((c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) || (c >= 0x3130 && c <= 0x318F)) hangul++;
        else if ((c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) || (c >= 0xFF66 && c <= 0xFF9D)) kana++;
        else if ((c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2FFFF) ||
                 (c >= 0xF900 && c <= 0xFAFF)) han++;
        else if ((c >= 0x0600 && c <= 0x06FF) || (c >= 0x0750 && c <= 0x077F) || (c >= 0xFB50 && c <= 0xFDFF) ||
                 (c >= 0xFE70 && c <= 0xFEFF)) arabic++;
        else if (c >= 0x0900 && c <= 0x097F) deva++;
        else if (c >= 0x0400 && c <= 0x052F) cyr++;
        else if (c < 0x250 || (c >= 0x1E00 && c <= 0x1EFF)) {
            latin++;
            switch (c) {
            case 0xF1: case 0xD1: uniq[ES]++; break;                    /* ñ */
            case 0xDF: case 0x1E9E: uniq[DE]++; break;                  /* ß */
            case 0x151: case 0x171: case 0x150: case 0x170: uniq[HU]++; break; /* ő ű */
            case 0x142: case 0x141: case 0x105: case 0x104: case 0x119: case 0x118: case 0x15B: case 0x15A:
            case 0x17A: case 0x179: case 0x17C: case 0x17B: uniq[PL]++; break; /* ł ą ę ś ź ż */
            case 0x159: case 0x158: case 0x11B: case 0x11A: case 0x16F: case 0x16E: /* ř ě ů */
            case 0x10D: case 0x10C: case 0x161: case 0x160: case 0x17E: case 0x17D: /* č š ž */
            case 0xFD: case 0xDD: case 0x148: case 0x147: case 0x165: case 0x164: case 0x10F: case 0x10E: /* ý ň ť ď */
                uniq[CS]++; break;
            case 0x131: case 0x130: case 0x11F: case 0x11E: case 0x15F: case 0x15E: uniq[TR]++; break; /* ı İ ğ ş */
            case 0xE3: case 0xF5: case 0xC3: case 0xD5: uniq[PT]++; break; /* ã õ */
            default: break;
            }
        }
    }
    /* ¿ and ¡ are punctuation, not letters */
    if (inverted) uniq[ES]++;
    if (!letters) return;
    struct { int n, lang; } scripts[] = {{hangul, KO}, {kana, JA}, {arabic, AR}, {deva, HI}, {cyr, RU}};
    if (kana) { script_decides(r, JA); return; } /* Japanese mixes kana with Han */
    int best_script = -1, best_n = latin;
    for (size_t s = 0; s < sizeof scripts / sizeof scripts[0]; s++)
        if (scripts[s].n > best_n) { best_n = scripts[s].n; best_script = scripts[s].lang; }
    if (han > best_n) { best_n = han; best_script = ZH; }
    if (best_script >= 0) { script_decides(r, best_script); return; }
    /* Latin script: n-gram statistics, CLD2, letters one language alone uses, function words */
    double ll[XTTS_N_LANGS];
    size_t known = xtts_langid_model_score(xtts_langid_model_builtin(), text, len, ll);
    double s[XTTS_N_LANGS];
    double top = -1e300;
    for (int l = 0; l < XTTS_N_LANGS; l++)
        if (is_latin_lang(l) && ll[l] > top) top = ll[l];
    for (int l = 0; l < XTTS_N_LANGS; l++) s[l] = is_latin_lang(l) ? (ll[l] - top) * P_NGRAM : -LANGID_IMPOSSIBLE;
    int n_uniq = 0, uniq_lang = -1;
    for (int l = 0; l < XTTS_N_LANGS; l++)
        if (uniq[l]) { n_uniq++; uniq_lang = l; }
    if (n_uniq == 1) s[uniq_lang] += P_LETTERS;
    int votes[XTTS_N_LANGS];
    word_votes(text, len, votes);
    if (quick) {
        double t[XTTS_N_LANGS];
        for (int l = 0; l < XTTS_N_LANGS; l++) t[l] = s[l] + P_WORDS * votes[l];
        if (lead(t) >= QUICK_LEAD) {
            finish(r, t, "text");
            r->open = P_CLD2;
            return;
        }
    }
    xtts_cld2_guess g[3];
    xtts_cld2_detect(text, len, "en,es,fr,de,it,pt,pl,tr,nl,cs,hu", g);
    for (int i = 0; i < 3; i++) {
        int cld = -1;
        for (size_t m = 0; m < sizeof cld2_map / sizeof cld2_map[0]; m++)
            if (!strcmp(g[i].code, cld2_map[m].cld2) && is_latin_lang(cld2_map[m].lang)) { cld = cld2_map[m].lang; break; }
        if (cld >= 0) { s[cld] += P_CLD2 * (i == 0 ? 1.0 : 0.5); break; }
    }
    for (int l = 0; l < XTTS_N_LANGS; l++) s[l] += P_WORDS * votes[l];
    (void)known;
    finish(r, s, "text");
}

void xtts_langid_detect(const char *text, size_t len, xtts_langid_result *r) { detect(text, len, r, 0); }

void xtts_langid_detect_quick(const char *text, size_t len, xtts_langid_result *r) { detect(text, len, r, 1); }

/* ---- the dataset and speaker prior ---------------------------------------------------- */

/* Pseudo-counts: ALPHA per language for the dataset distribution, BETA records of the
 * dataset distribution mixed into each speaker's. */
#define PRIOR_ALPHA 0.1
#define PRIOR_BETA 4.0

void xtts_langid_prior_init(xtts_langid_prior *p) { memset(p, 0, sizeof *p); }

void xtts_langid_prior_free(xtts_langid_prior *p) {
    if (!p) return;
    for (size_t i = 0; i < p->n_spk; i++) free(p->names[i]);
    free(p->names);
    free(p->sc);
    free(p->slot);
    memset(p, 0, sizeof *p);
}

/* speaker name -> dense index (order of first appearance); -1 for none, or with add = 0
 * for a name never added; -2 out of memory */
static long speaker_index(xtts_langid_prior *p, const char *s, int add) {
    if (!s || !*s) return -1;
    if (add && (p->n_spk + 1) * 2 > p->cap_slot) {
        size_t nc = p->cap_slot ? 2 * p->cap_slot : 64;
        size_t *ns = calloc(nc, sizeof *ns);
        if (!ns) return -2;
        for (size_t i = 0; i < p->n_spk; i++) {
            size_t h = xtts_fnv1a64(XTTS_FNV64_INIT, p->names[i], strlen(p->names[i])) & (nc - 1);
            while (ns[h]) h = (h + 1) & (nc - 1);
            ns[h] = i + 1;
        }
        free(p->slot);
        p->slot = ns;
        p->cap_slot = nc;
    }
    if (!p->cap_slot) return -1;
    size_t h = xtts_fnv1a64(XTTS_FNV64_INIT, s, strlen(s)) & (p->cap_slot - 1);
    while (p->slot[h] && strcmp(p->names[p->slot[h] - 1], s)) h = (h + 1) & (p->cap_slot - 1);
    if (p->slot[h]) return (long)p->slot[h] - 1;
    if (!add) return -1;
    if (p->n_spk == p->cap_spk) {
        size_t nc = p->cap_spk ? 2 * p->cap_spk : 16;
        char **nn = realloc(p->names, nc * sizeof *nn);
        if (!nn) return -2;
        p->names = nn;
        double *nsc = realloc(p->sc, nc * (XTTS_N_LANGS + 1) * sizeof *nsc);
        if (!nsc) return -2;
        p->sc = nsc;
        p->cap_spk = nc;
    }
    char *dup = strdup(s);
    if (!dup) return -2;
    p->names[p->n_spk] = dup;
    memset(p->sc + p->n_spk * (XTTS_N_LANGS + 1), 0, (XTTS_N_LANGS + 1) * sizeof *p->sc);
    p->slot[h] = ++p->n_spk;
    return (long)p->n_spk - 1;
}

void xtts_langid_prior_add(xtts_langid_prior *p, const xtts_langid_result *r, const char *speaker) {
    long k = speaker_index(p, speaker, 1);
    if (k == -2) p->failed = 1;
    if (r->lang < 0 || !r->sure) return;
    p->ds[r->lang] += 1;
    p->n_sure += 1;
    if (k >= 0) {
        p->sc[(size_t)k * (XTTS_N_LANGS + 1) + (size_t)r->lang] += 1;
        p->sc[(size_t)k * (XTTS_N_LANGS + 1) + XTTS_N_LANGS] += 1;
    }
}

void xtts_langid_prior_done(xtts_langid_prior *p) {
    for (int l = 0; l < XTTS_N_LANGS; l++) {
        p->p_ds[l] = (p->ds[l] + PRIOR_ALPHA) / (p->n_sure + PRIOR_ALPHA * XTTS_N_LANGS);
        p->lp_ds[l] = log(p->p_ds[l]);
    }
}

/* score + log prior per language (v), and the best of them */
static int prior_values(const xtts_langid_prior *p, const xtts_langid_result *r, const char *speaker, double v[XTTS_N_LANGS]) {
    long k = p->failed ? -1 : speaker_index((xtts_langid_prior *)p, speaker, 0);
    const double *c = k >= 0 ? p->sc + (size_t)k * (XTTS_N_LANGS + 1) : NULL;
    int best = 0;
    double best_v = -1e300;
    for (int l = 0; l < XTTS_N_LANGS; l++) {
        double lp = c ? log((c[l] + PRIOR_BETA * p->p_ds[l]) / (c[XTTS_N_LANGS] + PRIOR_BETA)) : p->lp_ds[l];
        v[l] = r->score[l] + lp;
        if (v[l] > best_v) { best_v = v[l]; best = l; }
    }
    return best;
}

int xtts_langid_prior_choose(const xtts_langid_prior *p, const xtts_langid_result *r, const char *speaker) {
    if (r->lang < 0 && p->n_sure == 0) return -1;
    double v[XTTS_N_LANGS];
    return prior_values(p, r, speaker, v);
}

int xtts_langid_prior_settles(const xtts_langid_prior *p, const xtts_langid_result *r, const char *speaker) {
    if (!(r->open > 0)) return 1;
    if (r->lang < 0 && p->n_sure == 0) return 1;
    double v[XTTS_N_LANGS];
    int best = prior_values(p, r, speaker, v);
    /* the full scores differ by the bonus to one language and by rounding (1e-6 is far
     * above that) */
    for (int l = 0; l < XTTS_N_LANGS; l++)
        if (l != best && !(v[best] - v[l] > r->open + 1e-6)) return 0;
    return 1;
}

size_t xtts_langid_choose(size_t n, const xtts_langid_result *res, const char *const *speaker, int *out) {
    xtts_langid_prior p;
    xtts_langid_prior_init(&p);
    for (size_t i = 0; i < n; i++) xtts_langid_prior_add(&p, &res[i], speaker ? speaker[i] : NULL);
    xtts_langid_prior_done(&p);
    size_t changed = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = xtts_langid_prior_choose(&p, &res[i], speaker ? speaker[i] : NULL);
        changed += res[i].lang >= 0 && out[i] >= 0 && out[i] != res[i].lang;
    }
    xtts_langid_prior_free(&p);
    return changed;
}

/* ---- results kept between two passes ---------------------------------------------------- */

/* An entry: the key's increase over the previous entry's (LEB128), lang + 1, flags (bit 0
 * sure, bits 1-2 the method: 0 none, 1 script, 2 text; bit 3 open = P_CLD2), then for text
 * the 11 Latin-script languages' scores and the other languages' common score (doubles as
 * they are). A script result is rebuilt by script_decides(), which made it. */
enum { ST_NONE = 0, ST_SCRIPT = 1, ST_TEXT = 2 };
#define ST_ENTRY_MAX (10 + 2 + 12 * sizeof(double))

void xtts_langid_store_init(xtts_langid_store *s, size_t limit) {
    memset(s, 0, sizeof *s);
    s->limit = limit;
}

void xtts_langid_store_free(xtts_langid_store *s) {
    if (!s) return;
    free(s->buf);
    memset(s, 0, sizeof *s);
}

int xtts_langid_store_put(xtts_langid_store *s, size_t key, const xtts_langid_result *r) {
    if (s->full) return 0;
    if (s->len && key <= s->last_put) return 0;
    int method = r->method[0] == 's' ? ST_SCRIPT : r->method[0] == 't' ? ST_TEXT : ST_NONE;
    if (r->lang < -1 || r->lang >= XTTS_N_LANGS || (method == ST_NONE) != (r->lang < 0)) return 0;
    if (r->open != 0 && !(method == ST_TEXT && r->open == P_CLD2)) return 0;
    if (method == ST_NONE)
        for (int l = 0; l < XTTS_N_LANGS; l++)
            if (r->score[l] != 0 || r->sure) return 0;
    int rest = -1; /* for text: a language outside the 11, whose score the others share */
    if (method == ST_TEXT) {
        for (int l = 0; l < XTTS_N_LANGS; l++) {
            if (is_latin_lang(l)) continue;
            if (rest < 0) rest = l;
            else if (memcmp(&r->score[l], &r->score[rest], sizeof(double))) return 0;
        }
    }
    if (method == ST_SCRIPT) { /* kept only when rebuilding gives it back */
        xtts_langid_result t;
        script_decides(&t, r->lang);
        if (t.sure != r->sure || memcmp(t.score, r->score, sizeof t.score)) return 0;
    }
    if (s->cap - s->len < ST_ENTRY_MAX) {
        if (s->len + ST_ENTRY_MAX > s->limit) { s->full = 1; return 0; }
        size_t nc = s->cap ? 2 * s->cap : 1 << 16;
        if (nc > s->limit) nc = s->limit;
        unsigned char *nb = realloc(s->buf, nc);
        if (!nb) { s->full = 1; return 0; }
        s->buf = nb;
        s->cap = nc;
    }
    unsigned char *o = s->buf + s->len;
    size_t d = s->len ? key - s->last_put : key;
    do {
        *o++ = (unsigned char)((d & 0x7f) | (d > 0x7f ? 0x80 : 0));
        d >>= 7;
    } while (d);
    *o++ = (unsigned char)(r->lang + 1);
    *o++ = (unsigned char)((r->sure ? 1 : 0) | method << 1 | (r->open != 0 ? 8 : 0));
    if (method == ST_TEXT) {
        for (int l = 0; l < XTTS_N_LANGS; l++)
            if (is_latin_lang(l)) { memcpy(o, &r->score[l], sizeof(double)); o += sizeof(double); }
        memcpy(o, &r->score[rest], sizeof(double));
        o += sizeof(double);
    }
    s->len = (size_t)(o - s->buf);
    s->last_put = key;
    return 1;
}

int xtts_langid_store_get(xtts_langid_store *s, size_t key, xtts_langid_result *r) {
    while (s->pos < s->len) {
        const unsigned char *q = s->buf + s->pos;
        size_t d = 0;
        for (int sh = 0;; sh += 7) {
            d |= (size_t)(*q & 0x7f) << sh;
            if (!(*q++ & 0x80)) break;
        }
        size_t k = s->pos ? s->last_got + d : d;
        if (k > key) return 0;
        int lang = q[0] - 1, flags = q[1], method = flags >> 1 & 3;
        q += 2;
        if (k == key) {
            if (method == ST_SCRIPT) script_decides(r, lang);
            else {
                r->lang = lang;
                r->sure = flags & 1;
                r->method = method == ST_TEXT ? "text" : "none";
                for (int l = 0; l < XTTS_N_LANGS; l++) r->score[l] = 0;
                if (method == ST_TEXT) {
                    double rest;
                    memcpy(&rest, q + 11 * sizeof(double), sizeof rest);
                    for (int l = 0; l < XTTS_N_LANGS; l++)
                        if (is_latin_lang(l)) { memcpy(&r->score[l], q, sizeof(double)); q += sizeof(double); }
                        else r->score[l] = rest;
                }
                r->open = flags & 8 ? P_CLD2 : 0;
            }
        }
        if (method == ST_TEXT && k != key) q += 12 * sizeof(double);
        else if (method == ST_TEXT) q += sizeof(double); /* the common score, read above */
        s->pos = (size_t)(q - s->buf);
        s->last_got = k;
        if (k == key) return 1;
    }
    return 0;
}
