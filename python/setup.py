"""Build hook of the xtts_prep package; its configuration is pyproject.toml.

A package directory that holds libxtts-reader.so (as `make wheel` stages it,
scripts/build-wheel.sh, with the libraries it links beyond glibc in xtts_prep/_libs/) builds a
platform wheel tagged py3-none-<platform>: XTTS_WHEEL_PLATFORM, which build-wheel.sh sets from
the glibc symbol versions the library needs and its architecture (manylinux_2_17_x86_64 when
built on Debian 11), or else manylinux_<this glibc>_<this machine>: the library is compiled for one architecture and loaded with ctypes, it is not
a CPython extension module, so the one wheel serves every Python 3; it needs the glibc it was
built against (or a newer one) and nothing else, which is what the manylinux tag says (PEP
600). Without the library (`pip install ./python`, `make install`) the package is pure
Python, py3-none-any.
"""

import os
import platform

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
HAS_LIBRARY = os.path.isfile(os.path.join(HERE, "xtts_prep", "libxtts-reader.so"))


def glibc_platform_tag(fallback):
    """manylinux_MAJOR_MINOR_ARCH for the glibc this build runs on; fallback elsewhere."""
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
        major, minor = version.split(".")[:2]
        if name != "glibc":
            return fallback
        return "manylinux_%d_%d_%s" % (int(major), int(minor), platform.machine())
    except (AttributeError, OSError, ValueError):
        return fallback


options = {}
if HAS_LIBRARY:
    from setuptools.dist import Distribution
    from wheel.bdist_wheel import bdist_wheel

    class PlatformDistribution(Distribution):
        """Installed into platlib, in a wheel that is not pure."""

        def has_ext_modules(self):
            return True

    class PlatformWheel(bdist_wheel):
        """A wheel for this glibc and architecture that any Python 3 can install."""

        def get_tag(self):
            platform = os.environ.get("XTTS_WHEEL_PLATFORM") or glibc_platform_tag(super().get_tag()[2])
            return "py3", "none", platform

    options = {"cmdclass": {"bdist_wheel": PlatformWheel}, "distclass": PlatformDistribution}

setup(**options)
