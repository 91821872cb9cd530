"""pip's build of the Python package imgpipe (pyproject.toml has the metadata).

    /usr/bin/python3 -m venv --system-site-packages ~/venvs/imgpipe
    ~/venvs/imgpipe/bin/pip install --no-build-isolation .
    ~/venvs/imgpipe/bin/pip wheel --no-build-isolation --no-deps -w dist .

--no-build-isolation: the build uses the environment's setuptools (the venv's, from
python3-venv) instead of fetching one from PyPI. The C++ build needs what
scripts/install-deps.sh installs (libtorch is not needed: the extension links only the
libtorch-free layers). --system-site-packages gives the venv Debian's wheel (setuptools'
bdist_wheel: python3-wheel; without it pip stops with "invalid command 'bdist_wheel'"),
numpy (which decode_image's arrays need) and torch (for imgpipe.torch only). A venv
without them needs wheel installed first, and numpy from an index or --no-deps. On
Debian 12 a system-wide `pip install` (root or not, --user too) stops with
"externally-managed-environment" (PEP 668): use a venv, or --break-system-packages at
your own risk.

The extension is CMake's target imgpipe_python (python/CMakeLists.txt); build_ext
configures a Release build without libtorch in build-pip/temp.<platform>-<python>/cmake/
(kept, so a second install rebuilds only what changed) and copies the module in. With
IMGPIPE_CMAKE_BUILD_DIR=<a configured build folder> (e.g. build/) it builds the target
there instead (nothing to do when it is up to date) and setuptools' own staging and
egg-info go to <that folder>/pip-build: the source tree gets nothing.
CMAKE_BUILD_PARALLEL_LEVEL sets the jobs (default: every CPU)."""

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
CMAKE_TARGET = "imgpipe_python"
# Where python/CMakeLists.txt puts the module, relative to the build folder.
MODULE_DIR = os.path.join("python", "imgpipe")


def reused_build_dir():
    """The configured build folder named by IMGPIPE_CMAKE_BUILD_DIR, or None."""
    folder = os.environ.get("IMGPIPE_CMAKE_BUILD_DIR")
    if not folder:
        return None
    folder = os.path.abspath(folder)
    if not os.path.isfile(os.path.join(folder, "CMakeCache.txt")):
        sys.exit(f"IMGPIPE_CMAKE_BUILD_DIR={folder} is not a configured CMake build folder "
                 "(no CMakeCache.txt)")
    return folder


class CleanBuild(build):
    """setuptools' build, from an empty staging folder (build_lib): a wheel holds what this
    run built and copied, never a module left there by an earlier one."""

    def run(self):
        shutil.rmtree(self.build_lib, ignore_errors=True)
        super().run()


class CMakeBuildExt(build_ext):
    """Builds the extension with the project's CMake instead of compiling sources."""

    def build_extension(self, ext):
        build_dir = reused_build_dir()
        if build_dir is None:
            # 1. Configure once per Python (build_temp names its version): Release, only what
            #    the extension needs.
            build_dir = os.path.join(os.path.abspath(self.build_temp), "cmake")
            if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
                self.spawn(["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                            "-DIMGPIPE_TORCH=OFF", "-DIMGPIPE_PYTHON=ON",
                            f"-DPYTHON_EXECUTABLE={os.path.realpath(sys.executable)}"])
        # 2. Build the target (and what it links), nothing else.
        command = ["cmake", "--build", build_dir, "--target", CMAKE_TARGET]
        if "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
            command += ["-j", str(len(os.sched_getaffinity(0)))]
        env = dict(os.environ)
        for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):  # an outer make's jobserver
            env.pop(name, None)
        print(" ".join(command), flush=True)
        subprocess.run(command, env=env, check=True)
        # 3. The module, named for this Python (same EXT_SUFFIX, or it would not load).
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build_dir, MODULE_DIR, "_imgpipe" + suffix)
        if not os.path.isfile(built):
            found = glob.glob(os.path.join(build_dir, MODULE_DIR, "_imgpipe*"))
            sys.exit(f"{built} was not built: the build folder has {found or 'no module'}, "
                     f"built for another Python than {sys.executable} ({suffix})?")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)
        shutil.copymode(built, target)
        # 4. OpenCV's codecs, loaded by the module on first use (src/image/opencv_loader.h).
        codecs = os.path.join(build_dir, MODULE_DIR, "libimgpipe_opencv.so")
        shutil.copyfile(codecs, os.path.join(os.path.dirname(target), "libimgpipe_opencv.so"))
        shutil.copymode(codecs, os.path.join(os.path.dirname(target), "libimgpipe_opencv.so"))


def staging_dir():
    """setuptools' build_base and egg-info folder: never build/ (the project's CMake
    build folder), nothing in the source tree but build-pip/ (ignored by git)."""
    build_dir = reused_build_dir()
    folder = os.path.join(build_dir, "pip-build") if build_dir else os.path.join(ROOT, "build-pip")
    os.makedirs(folder, exist_ok=True)
    return folder


setup(
    package_dir={"": "python"},
    packages=["imgpipe"],
    ext_modules=[Extension("imgpipe._imgpipe", sources=[])],
    cmdclass={"build": CleanBuild, "build_ext": CMakeBuildExt},
    options={"build": {"build_base": staging_dir()}, "egg_info": {"egg_base": staging_dir()}},
)
