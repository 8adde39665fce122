build-v2/obj/prep/normalize.o: prep/normalize.c prep/normalize.h \
 common/xtts_common.h prep/xtts_text.h formats/tokens.h \
 prep/normalize_rules.h prep/numbers.h prep/strbuf.h
prep/normalize.h:
common/xtts_common.h:
prep/xtts_text.h:
formats/tokens.h:
prep/normalize_rules.h:
prep/numbers.h:
prep/strbuf.h:
