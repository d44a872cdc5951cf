"""Builds libtilegemm with CMake and puts it inside the `tilegemm` package.

Configuration comes from pyproject.toml; this file only adds the native build step:
    cmake -S . -B <build_temp>/cmake -DTG_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release
    cmake --build <build_temp>/cmake --target tilegemm
Extra CMake arguments: TILEGEMM_CMAKE_ARGS="-DTG_WITH_CUDA=OFF -DTG_CUDA_ARCH=90a".
Set TILEGEMM_SKIP_NATIVE_BUILD=1 to package without the library (it is then looked up through
TILEGEMM_LIBRARY or the system's library path at import).
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Command, setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildNative(Command):
    description = "build libtilegemm.so with CMake"
    user_options = []

    def initialize_options(self):
        self.build_temp = None
        self.build_lib = None

    def finalize_options(self):
        self.set_undefined_options("build", ("build_temp", "build_temp"), ("build_lib", "build_lib"))

    def run(self):
        if os.environ.get("TILEGEMM_SKIP_NATIVE_BUILD"):
            return
        cmake = shutil.which("cmake")
        if not cmake:
            sys.exit("tilegemm: building the library needs cmake (pip install cmake, or your "
                     "package manager)")
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        args = [cmake, "-S", ROOT, "-B", build_dir, "-DTG_BUILD_TESTS=OFF",
                "-DCMAKE_BUILD_TYPE=Release"]
        args += shlex.split(os.environ.get("TILEGEMM_CMAKE_ARGS", ""))
        subprocess.check_call(args)
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call([cmake, "--build", build_dir, "--target", "tilegemm", "-j", jobs])
        built = [p for p in glob.glob(os.path.join(build_dir, "libtilegemm.so*"))
                 if not os.path.islink(p)] or glob.glob(os.path.join(build_dir, "libtilegemm*.dylib"))
        if not built:
            sys.exit(f"tilegemm: the CMake build produced no libtilegemm in {build_dir}")
        dest = os.path.join(self.build_lib, "tilegemm")
        os.makedirs(dest, exist_ok=True)
        for old in glob.glob(os.path.join(dest, "libtilegemm*")):
            os.remove(old)
        name = "libtilegemm.dylib" if built[0].endswith(".dylib") else "libtilegemm.so"
        shutil.copyfile(built[0], os.path.join(dest, name))


class BuildPy(build_py):
    def run(self):
        super().run()
        self.run_command("build_native")


class BinaryDistribution(Distribution):
    """The wheel carries a native library: platform-specific, not pure Python."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_native": BuildNative, "build_py": BuildPy},
      distclass=BinaryDistribution,
      options={"build": {"build_base": os.path.join("build", "python")}})
