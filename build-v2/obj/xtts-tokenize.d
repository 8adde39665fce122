build-v2/obj/xtts-tokenize.o: prep/xtts-tokenize.c common/xtts_common.h \
 prep/tokenize_run.h prep/tokenizer.h formats/tokens.h
common/xtts_common.h:
prep/tokenize_run.h:
prep/tokenizer.h:
formats/tokens.h:
