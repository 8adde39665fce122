build-v2/obj/prep/phonemes.o: prep/phonemes.c prep/strbuf.h \
 prep/tokenizer.h common/xtts_common.h formats/tokens.h
prep/strbuf.h:
prep/tokenizer.h:
common/xtts_common.h:
formats/tokens.h:
