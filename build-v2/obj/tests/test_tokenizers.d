build-v2/obj/tests/test_tokenizers.o: tests/test_tokenizers.c \
 prep/tokenizer.h common/xtts_common.h formats/tokens.h
prep/tokenizer.h:
common/xtts_common.h:
formats/tokens.h:
