build-v2/obj/prep/tokenizer.o: prep/tokenizer.c prep/tokenizer.h \
 common/xtts_common.h formats/tokens.h prep/strbuf.h
prep/tokenizer.h:
common/xtts_common.h:
formats/tokens.h:
prep/strbuf.h:
