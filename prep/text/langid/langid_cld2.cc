// langid_cld2.cc — the C++ call into CLD2 (Compact Language Detector 2), wrapped in one
// extern "C" function so that the rest of the language identifier stays C (prep/text/langid/langid.c).
#include <cstdio>
#include <cstring>

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

#include "prep/text/langid/langid.h"

extern "C" int xtts_cld2_detect(const char *text, size_t len, const char *hint, xtts_cld2_guess out[3]) {
    // CLD2 returns early without filling these for input it does not take as UTF-8
    CLD2::Language lang3[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE};
    int percent3[3] = {0, 0, 0};
    double score3[3] = {0, 0, 0};
    int text_bytes = 0, valid_prefix = 0;
    bool reliable = false;
    CLD2::CLDHints hints = {hint, nullptr, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    if (len > 0x7fffffff) len = 0x7fffffff;
    CLD2::ExtDetectLanguageSummaryCheckUTF8(text, (int)len, true, &hints, CLD2::kCLDFlagBestEffort, lang3, percent3,
                                            score3, nullptr, &text_bytes, &reliable, &valid_prefix);
    for (int i = 0; i < 3; i++) {
        std::snprintf(out[i].code, sizeof out[i].code, "%s", CLD2::LanguageCode(lang3[i]));
        out[i].percent = percent3[i];
        out[i].score = score3[i];
    }
    return reliable ? 1 : 0;
}
