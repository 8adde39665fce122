build-v2/obj/prep/n2w_pt.o: prep/n2w_pt.c prep/num2words.h prep/strbuf.h
prep/num2words.h:
prep/strbuf.h:
