build-v2/obj/prep/n2w_it.o: prep/n2w_it.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
