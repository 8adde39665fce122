"""Build hook of the xtts_prep package; its configuration is pyproject.toml.

A package directory that holds libxtts-reader.so (as `make wheel` stages it,
scripts/build-wheel.sh) builds a platform wheel tagged py3-none-<platform>, e.g.
py3-none-linux_x86_64: the library is compiled for one architecture and loaded with ctypes,
it is not a CPython extension module, so the one wheel serves every Python 3. Without the
library (`pip install ./python`, `make install`) the package is pure Python, py3-none-any.
"""

import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
HAS_LIBRARY = os.path.isfile(os.path.join(HERE, "xtts_prep", "libxtts-reader.so"))

options = {}
if HAS_LIBRARY:
    from setuptools.dist import Distribution
    from wheel.bdist_wheel import bdist_wheel

    class PlatformDistribution(Distribution):
        """Installed into platlib, in a wheel that is not pure."""

        def has_ext_modules(self):
            return True

    class PlatformWheel(bdist_wheel):
        """A wheel for this platform that any Python 3 can install."""

        def get_tag(self):
            return "py3", "none", super().get_tag()[2]

    options = {"cmdclass": {"bdist_wheel": PlatformWheel}, "distclass": PlatformDistribution}

setup(**options)
