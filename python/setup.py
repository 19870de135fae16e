"""Build hook: record the libfa4 source tree this package was installed from
(fa4/_paths.py), so that an installed copy still finds the tree's in-tree
build (build/.libs/libfa4.so) when libfa4 itself is not installed.  Everything
else is in pyproject.toml."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPy(build_py):
    def run(self):
        super().run()
        top = os.path.dirname(HERE)
        if os.path.isfile(os.path.join(top, "lib", "fa4.h")):
            path = os.path.join(self.build_lib, "fa4", "_paths.py")
            with open(path, "w") as f:
                f.write('"""Written when the package was built (python/setup.py)."""\n')
                f.write("SOURCE_TREE = %r\n" % top)


setup(cmdclass={"build_py": BuildPy})
