build-v2/obj/train/checkpoint.o: train/checkpoint.c train/checkpoint.h \
 common/xtts_common.h train/model.h
train/checkpoint.h:
common/xtts_common.h:
train/model.h:
