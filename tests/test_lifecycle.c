/* test_lifecycle.c — the lifecycle rule of docs/design.md: every destructor (_delete, _close,
 * _free, _abort) accepts NULL and does nothing with it, so that an error path can release
 * whatever it has without checking what it made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/strbuf.h"
#include "common/xtts_common.h"
#include "kernels/mel.h"
#include "kernels/mel_batch.h"
#include "kernels/mel_cuda.h"
#include "formats/record.h"
#include "formats/tokens.h"
#include "cache/store/codes_store.h"
#include "cache/store/read/reader.h"
#include "cache/store/read/reader_api.h"
#include "cache/store/writer.h"
#include "cache/store/writer_internal.h"
#include "formats/model/torch_pth.h"
#include "formats/model/zip_read.h"
#include "prep/audio/audio.h"
#include "prep/dataset/metadata.h"
#include "prep/melcache/builder.h"
#include "prep/text/langid/langid.h"
#include "prep/text/langid/langid_model.h"
#include "prep/text/tokenizer/tokenizer.h"
#include "prep/text/tokenizer/tokenizer_internal.h"
#include "train/loader.h"
#include "train/model.h"
#include "train/train_cuda.h"

static void test_every_destructor_accepts_null(void **state) {
    (void)state;
    xtts_sb_free(NULL);
    xtts_hash_set_free(NULL);
    xtts_id_filter_free(NULL);
    xtts_mel_delete(NULL);
    xtts_mel_cuda_delete(NULL);
    xtts_mel_batch_delete(NULL);
    xtts_record_encoder_delete(NULL);
    xtts_record_decoder_delete(NULL);
    xtts_tokens_reader_close(NULL);
    xtts_pth_close(NULL);
    xtts_codes_store_close(NULL);
    xtts_codes_dirs_free(NULL, 0);
    xtts_zip_close(NULL);
    xtts_cache_close(NULL);
    xtts_cache_reader_delete(NULL);
    xtts_batch_free(NULL);
    xtts_api_close(NULL);
    xtts_cache_writer_abort(NULL);
    xtts_dir_listing_free(NULL);
    xtts_id_merge_close(NULL);
    xtts_audio_delete(NULL);
    xtts_meta_close(NULL);
    xtts_record_builder_free(NULL);
    xtts_langid_prior_free(NULL);
    xtts_langid_store_free(NULL);
    xtts_langid_model_delete(NULL);
    xtts_tokenizer_close(NULL);
    xtts_bpe_close(NULL);
    xtts_phonemizer_delete(NULL);
    xtts_dataset_free(NULL);
    xtts_loader_delete(NULL);
    xtts_model_delete(NULL);
    xtts_cuda_trainer_delete(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_destructor_accepts_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
