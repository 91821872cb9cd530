#!/usr/bin/env python3
"""The layering check: every #include of src/ and python/src/ names a folder that its
folder may include, as the tables of docs/architecture.md say, and libtorch and OpenCV
only where that page allows them. Prints each violation as FILE:LINE: and exits 1.

  scripts/check_layers.py [--root DIR]   check the tree at DIR (default: this repo)
  scripts/check_layers.py --self-test    check a made-up tree with one violation of each
                                         kind, and fail unless each is found
"""
import argparse
import os
import re
import sys
import tempfile

FOLDER = re.compile(r"`((?:src|python)/[a-z_]+/|python/src/)`")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
TORCH = re.compile(r"^(torch|ATen|c10)/")
TORCH_FOLDERS = {"src/train/", "src/extract/"}
OPENCV_FILES = {"src/image/opencv_module.cc"}


def read_tables(page):
    """({folder: set of folders it may include}, {folder: extra folders for tests})."""
    allowed, test_extra = {}, {}
    for line in open(page, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not cells or not FOLDER.fullmatch(cells[0]):
            continue
        folder = FOLDER.fullmatch(cells[0]).group(1)
        if len(cells) == 4:  # folder | layer | owns | may include
            allowed[folder] = set(FOLDER.findall(cells[3])) | {folder}
            if "every folder above" in cells[3]:
                allowed[folder] = None  # anything
        elif len(cells) == 2:  # tests in | tests may also include
            test_extra[folder] = set(FOLDER.findall(cells[1]))
    if not allowed:
        sys.exit("check_layers: no layer table in " + page)
    return allowed, test_extra


def is_test(name):
    return name.endswith("_test.cc") or "_test_util" in name or name.endswith("_test.h")


def folder_of_include(target):
    """'src/X/' for an include "X/foo.h" when src/X is a layer, else None."""
    head = target.split("/", 1)[0]
    return "src/" + head + "/" if "/" in target else None


def check(root):
    """The violations in the tree at `root`, as 'path:line: message' strings."""
    allowed, test_extra = read_tables(os.path.join(root, "docs", "architecture.md"))
    layers = {f for f in allowed if f.startswith("src/")}
    problems = []
    for folder, may in sorted(allowed.items()):
        base = os.path.join(root, folder)
        for dirpath, _, files in os.walk(base):
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                extra = test_extra.get(folder, set()) if is_test(name) else set()
                for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    quote, target = m.groups()
                    where = "%s:%d: " % (rel, number)
                    if quote == '"':
                        dep = folder_of_include(target)
                        if dep == "src/testing/":
                            if folder != dep and not is_test(name):
                                problems.append(where + "test gear (%s) outside a test" % target)
                        elif dep in layers and may is not None and dep not in may | extra:
                            problems.append(where + "%s may not include %s (docs/architecture.md)"
                                            % (folder, target))
                    elif TORCH.match(target) and folder not in TORCH_FOLDERS:
                        problems.append(where + "libtorch (%s) outside src/train/ and src/extract/"
                                        % target)
                    elif target.startswith("opencv2/") and rel not in OPENCV_FILES and not is_test(name):
                        problems.append(where + "OpenCV (%s) outside src/image/opencv_module.cc"
                                        % target)
    return problems


def self_test(repo):
    """Copies the page into a made-up tree with one violation of each kind; returns 0
    when check() reports exactly those."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(repo, "docs", "architecture.md"), encoding="utf-8") as f:
            page = f.read()
        with open(os.path.join(root, "docs", "architecture.md"), "w", encoding="utf-8") as f:
            f.write(page)
        files = {
            "src/util/file.cc": '#include "util/file.h"\n',          # fine
            "src/record/reader.cc": '#include "pipeline/dataset.h"\n',  # upward
            "src/io/http_test.cc": '#include "record/tfrecord_reader.h"\n',  # test gear: fine
            "src/io/http.cc": '#include "record/tfrecord_reader.h"\n',  # not in a test
            "src/loader/plan.cc": "#include <torch/torch.h>\n",        # libtorch
            "src/image/png.cc": "#include <opencv2/core.hpp>\n",       # OpenCV
            "src/cli/main.cc": '#include "train/trainer.h"\n',         # fine
            "src/cli/main_test.cc": '#include "testing/fault_proxy.h"\n',  # fine
            "src/loader/loader.cc": '#include "testing/test_paths.h"\n',  # test gear
        }
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        found = sorted(p.split(":")[0] for p in check(root))
        want = ["src/image/png.cc", "src/io/http.cc", "src/loader/loader.cc", "src/loader/plan.cc",
                "src/record/reader.cc"]
        if found != want:
            print("self-test: found %s, want %s" % (found, want))
            return 1
        print("self-test: the %d violations found, nothing else" % len(want))
        return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test(args.root)
    problems = check(args.root)
    for p in problems:
        print(p)
    print("layering: %d violation(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
