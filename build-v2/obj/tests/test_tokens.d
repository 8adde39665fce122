build-v2/obj/tests/test_tokens.o: tests/test_tokens.c formats/tokens.h \
 common/xtts_common.h
formats/tokens.h:
common/xtts_common.h:
