build-v2/obj/tests/test_bpe.o: tests/test_bpe.c prep/tokenizer.h \
 common/xtts_common.h formats/tokens.h
prep/tokenizer.h:
common/xtts_common.h:
formats/tokens.h:
