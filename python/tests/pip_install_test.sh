#!/usr/bin/env bash
# CTest python_pip_install: the package as a user installs it (pyproject.toml, setup.py).
#   [PYTHON=/usr/bin/python3] pip_install_test.sh SOURCE_DIR BUILD_DIR TESTDATA_DIR
# 1. `pip install --no-build-isolation --no-deps SOURCE_DIR` into a fresh venv of
#    PYTHON, the build's (--system-site-packages: Debian's numpy, PIL, wheel), with
#    IMGPIPE_CMAKE_BUILD_DIR=BUILD_DIR, so the extension this build made is the one
#    installed (nothing compiles when it is up to date);
# 2. imports it from outside the source tree with PYTHONPATH unset: it must come from
#    the venv, decode a real JPEG (the size PIL reads) and read TensorFlow's TFRecords;
# 3. `pip wheel` of the same: a CPython platform wheel with the module and the .py files;
# 4. `pip uninstall` removes every installed file.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
testdata=$(cd "$3" && pwd)

tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp/}pip-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset PYTHONPATH PYTHONHOME PYTHONUSERBASE VIRTUAL_ENV MAKEFLAGS MFLAGS MAKELEVEL
# pip's caches, configuration and temporary files all in $tmp; no index (offline)
export HOME="$tmp/home" TMPDIR="$tmp/tmp" PIP_NO_CACHE_DIR=1 PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export IMGPIPE_CMAKE_BUILD_DIR="$build"
mkdir -p "$HOME" "$TMPDIR"
cd "$tmp"  # outside the source tree: `import imgpipe` cannot find python/imgpipe here

echo "== 1. pip install into $tmp/venv"
python=${PYTHON:-/usr/bin/python3}
if ! "$python" -c "import ensurepip, wheel" 2>/dev/null; then
  echo "$python has no ensurepip or wheel: apt-get install python3-venv python3-wheel" >&2
  exit 1
fi
"$python" -m venv --system-site-packages "$tmp/venv"
pip="$tmp/venv/bin/pip"
"$pip" install --no-build-isolation --no-deps "$src"

echo "== 2. import from the venv"
"$tmp/venv/bin/python" - "$tmp/venv" "$testdata" <<'EOF'
import pathlib
import sys

venv, testdata = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2])
import imgpipe
from PIL import Image

site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
for module in (imgpipe, imgpipe._imgpipe, imgpipe.errors):
    where = pathlib.Path(module.__file__).resolve()
    assert site in where.parents, f"{module.__name__} imported from {where}, not from {site}"
assert (site / "imgpipe" / "torch.py").is_file()
assert "torch" not in sys.modules, "import imgpipe imported torch"

jpeg = sorted((testdata / "images" / "hymenoptera" / "val" / "ants").glob("*.jpg"))[0]
image = imgpipe.decode_image(jpeg.read_bytes())
width, height = Image.open(jpeg).size
assert image.shape == (height, width, 3) and str(image.dtype) == "uint8", (jpeg, image.shape)
assert image.std() > 0, "a photo decoded to one flat colour"

records = list(imgpipe.TFRecordReader(str(testdata / "tfrecord" / "pytorch-data" / "example.tfrecord")))
assert len(records) == 4
assert list(imgpipe.parse_example(records[0])["x_int"][:3]) == [0, 10, 20]
print(f"imported {imgpipe.__file__}; {jpeg.name} {image.shape}; 4 TensorFlow records")
EOF

echo "== 3. pip wheel"
"$pip" wheel --no-build-isolation --no-deps -w "$tmp/wheels" "$src"
"$tmp/venv/bin/python" - "$tmp/wheels" <<'EOF'
import pathlib
import sys
import sysconfig
import zipfile

wheels = list(pathlib.Path(sys.argv[1]).glob("imgpipe-*.whl"))
assert len(wheels) == 1, wheels
tag = sys.implementation.cache_tag.replace("cpython-", "cp")  # cpython-311 -> cp311
platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")  # linux_x86_64
assert wheels[0].name.endswith(f"-{tag}-{tag}-{platform}.whl"), f"{wheels[0].name}: not a {tag} {platform} wheel"
names = zipfile.ZipFile(wheels[0]).namelist()
module = "imgpipe/_imgpipe" + sysconfig.get_config_var("EXT_SUFFIX")
for name in (module, "imgpipe/__init__.py", "imgpipe/errors.py", "imgpipe/torch.py"):
    assert name in names, f"{wheels[0].name} lacks {name}: {names}"
print(f"{wheels[0].name}: {len(names)} files")
EOF

echo "== 4. pip uninstall"
"$pip" uninstall -y imgpipe
if left=$(ls -d "$tmp"/venv/lib/python3*/site-packages/imgpipe 2>/dev/null); then
  echo "pip uninstall left $left" >&2
  exit 1
fi
echo "pip install, import, wheel and uninstall: ok"
