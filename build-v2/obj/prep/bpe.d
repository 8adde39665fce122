build-v2/obj/prep/bpe.o: prep/bpe.c prep/strbuf.h prep/tokenizer.h \
 common/xtts_common.h formats/tokens.h
prep/strbuf.h:
prep/tokenizer.h:
common/xtts_common.h:
formats/tokens.h:
