import sys

from .cache import _main

sys.exit(_main(sys.argv[1:]))
