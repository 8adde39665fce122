build-v2/obj/tests/test_normalize.o: tests/test_normalize.c \
 prep/normalize.h common/xtts_common.h
prep/normalize.h:
common/xtts_common.h:
