build-v2/obj/tests/test_train_checkpoint.o: tests/test_train_checkpoint.c \
 train/checkpoint.h common/xtts_common.h train/model.h train/optim.h
train/checkpoint.h:
common/xtts_common.h:
train/model.h:
train/optim.h:
