build-v2/obj/prep/tokenize_run.o: prep/tokenize_run.c prep/tokenize_run.h \
 common/xtts_common.h prep/tokenizer.h formats/tokens.h prep/langid.h \
 prep/normalize.h
prep/tokenize_run.h:
common/xtts_common.h:
prep/tokenizer.h:
formats/tokens.h:
prep/langid.h:
prep/normalize.h:
