build-v2/obj/common/xtts_common.o: common/xtts_common.c \
 common/xtts_common.h
common/xtts_common.h:
