build-v2/obj/kernels/cuda_plugin.o: kernels/cuda_plugin.c \
 kernels/cuda_plugin.h
kernels/cuda_plugin.h:
