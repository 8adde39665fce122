build-v2/obj/prep/langid_cld2.o: prep/langid_cld2.cc prep/langid.h
prep/langid.h:
