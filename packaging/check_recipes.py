#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Offline checks of the packaging recipes: Conan and vcpkg cannot be installed here.

    check_recipes.py conan   # packaging/conan/conanfile.py and its test_package
    check_recipes.py vcpkg   # packaging/vcpkg/ports/snippets/vcpkg.json

What this proves: the files parse (Python AST, JSON), declare what each tool requires of them,
and agree with the project (name, the version in CMakeLists.txt, the CMake package and target
names, the files they export). What it cannot prove: that Conan or vcpkg accept the recipes,
that the dependency names and version ranges resolve on ConanCenter or in the vcpkg registry,
or that the Conan methods run (the conan module is never imported).
"""

import ast
import json
import pathlib
import re
import sys

PACKAGING = pathlib.Path(__file__).resolve().parent
ROOT = PACKAGING.parent

errors = []


def fail(where, message):
    errors.append(f"{where}: {message}")


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*snippets\s+VERSION\s+([0-9]+(?:\.[0-9]+)*)", text)
    if not match:
        sys.exit("CMakeLists.txt: no project(snippets VERSION x.y.z)")
    return match.group(1)


# --- Conan -----------------------------------------------------------------------------------


def parse_python(path):
    source = path.read_text()
    try:
        tree = ast.parse(source, filename=str(path))
        compile(tree, str(path), "exec")
    except SyntaxError as error:
        fail(path, f"does not parse: {error}")
        return None
    return tree


def conan_classes(tree):
    """Classes whose bases include ConanFile (bare or as conan.ConanFile)."""
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            if name == "ConanFile":
                found.append(node)
    return found


def class_attributes(cls):
    """Class-level `name = <literal>` assignments."""
    values = {}
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    values[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    values[target.id] = None  # present, but not a literal
    return values


def methods(cls):
    return {node.name: node for node in cls.body if isinstance(node, ast.FunctionDef)}


def string_constants(node):
    return [n.value for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def calls_named(node, name):
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            func = n.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called == name:
                yield n


def check_conan_imports(path, tree):
    for node in ast.walk(tree):
        module = node.module if isinstance(node, ast.ImportFrom) else None
        if module and module.split(".")[0] == "conans":
            fail(path, f"imports the Conan 1 API ({module}); use `conan`")


def load_conan_class(path):
    """The one ConanFile class of the recipe at `path`, or None after reporting why not."""
    tree = parse_python(path)
    if tree is None:
        return None
    check_conan_imports(path, tree)
    classes = conan_classes(tree)
    if len(classes) != 1:
        fail(path, f"expected one class deriving ConanFile, found {len(classes)}")
        return None
    return classes[0]


def check_conan_recipe(version):
    path = PACKAGING / "conan" / "conanfile.py"
    cls = load_conan_class(path)
    if cls is None:
        return
    attrs = class_attributes(cls)
    expected = {"name": "snippets", "version": version, "package_type": "header-library",
                "no_copy_source": True}
    for key, value in expected.items():
        if key not in attrs:
            fail(path, f"class {cls.name} has no `{key}` attribute")
        elif attrs[key] != value:
            fail(path, f"{key} = {attrs[key]!r}, expected {value!r}")

    defs = methods(cls)
    for required in ("requirements", "package", "package_info", "package_id"):
        if required not in defs:
            fail(path, f"no {required}() method")

    # Exported sources: what the CMake install needs, and it must exist in the tree.
    exported = string_constants(defs["export_sources"]) if "export_sources" in defs else []
    if "exports_sources" in attrs and attrs["exports_sources"]:
        value = attrs["exports_sources"]
        exported += [value] if isinstance(value, str) else list(value)
    for pattern, real in (("include/*", "include/snippets"), ("cmake/*", "cmake"),
                          ("CMakeLists.txt", "CMakeLists.txt")):
        if pattern not in exported:
            fail(path, f"does not export {pattern}")
        if not (ROOT / real).exists():
            fail(path, f"exports {pattern}, but {ROOT / real} does not exist")

    if "requirements" in defs:
        requires = [c.args[0].value for c in calls_named(defs["requirements"], "requires")
                    if c.args and isinstance(c.args[0], ast.Constant)]
        for dependency in ("xbyak", "boost"):  # ConanCenter names
            if not any(r.startswith(dependency + "/") for r in requires):
                fail(path, f"requirements() does not require {dependency}/...")

    if "package_info" in defs:
        properties = {}
        for call in calls_named(defs["package_info"], "set_property"):
            if len(call.args) == 2 and all(isinstance(a, ast.Constant) for a in call.args):
                properties[call.args[0].value] = call.args[1].value
        for key, value in (("cmake_file_name", "snippets"),
                           ("cmake_target_name", "snippets::snippets")):
            if properties.get(key) != value:
                fail(path, f"package_info() sets {key} = {properties.get(key)!r}, "
                           f"expected {value!r}")


def check_conan_test_package():
    folder = PACKAGING / "conan" / "test_package"
    path = folder / "conanfile.py"
    cls = load_conan_class(path)
    if cls is None:
        return
    # A test_package is a consumer: Conan 2 gives it the reference under test, so it declares
    # no name/version/package_type of its own.
    attrs = class_attributes(cls)
    for key in ("name", "version", "package_type"):
        if key in attrs:
            fail(path, f"a test_package should not declare `{key}`")
    defs = methods(cls)
    if "test" not in defs:
        fail(path, "no test() method")
    if "requirements" not in defs or "tested_reference_str" not in ast.dump(defs["requirements"]):
        fail(path, "requirements() must require self.tested_reference_str")

    cmake = (folder / "CMakeLists.txt").read_text()
    if not re.search(r"find_package\(\s*snippets\s+CONFIG\s+REQUIRED\s*\)", cmake):
        fail(folder / "CMakeLists.txt", "no find_package(snippets CONFIG REQUIRED)")
    if "snippets::snippets" not in cmake:
        fail(folder / "CMakeLists.txt", "does not link snippets::snippets")
    if not (folder / "test_package.cpp").exists():
        fail(folder, "test_package.cpp is missing")


# --- vcpkg -----------------------------------------------------------------------------------

# Top-level fields of a port's vcpkg.json (vcpkg rejects unknown ones; "$..." are comments).
VCPKG_FIELDS = {
    "name", "version", "version-semver", "version-date", "version-string", "port-version",
    "description", "homepage", "documentation", "license", "supports", "dependencies",
    "features", "default-features", "maintainers", "builtin-baseline", "overrides",
}


def check_vcpkg_manifest(version):
    port = PACKAGING / "vcpkg" / "ports" / "snippets"
    path = port / "vcpkg.json"
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        fail(path, f"not valid JSON: {error}")
        return
    if not isinstance(manifest, dict):
        fail(path, "top level is not an object")
        return

    for key in manifest:
        if key not in VCPKG_FIELDS and not key.startswith("$"):
            fail(path, f"unknown field {key!r}")
    for key in ("name", "version", "description", "dependencies"):
        if key not in manifest:
            fail(path, f"missing {key!r}")
    name = manifest.get("name")
    if name != "snippets" or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", str(name)):
        fail(path, f"name {name!r}: expected 'snippets'")
    if manifest.get("version") != version:
        fail(path, f"version {manifest.get('version')!r}, CMakeLists.txt says {version!r}")

    dependencies = {}
    for entry in manifest.get("dependencies", []):
        if isinstance(entry, str):
            dependencies[entry] = {}
        elif isinstance(entry, dict) and "name" in entry:
            dependencies[entry["name"]] = entry
        else:
            fail(path, f"malformed dependency {entry!r}")
    for dependency, host in (("xbyak", False), ("boost-graph", False),
                             ("vcpkg-cmake", True), ("vcpkg-cmake-config", True)):
        if dependency not in dependencies:
            fail(path, f"does not depend on {dependency}")
        elif bool(dependencies[dependency].get("host", False)) != host:
            fail(path, f"{dependency} should {'' if host else 'not '}be a host dependency")

    for required in ("portfile.cmake", "usage"):
        if not (port / required).exists():
            fail(port, f"{required} is missing")


def main(argv):
    what = argv[1] if len(argv) > 1 else "all"
    if what not in ("conan", "vcpkg", "all"):
        sys.exit(__doc__)
    version = project_version()
    if what in ("conan", "all"):
        check_conan_recipe(version)
        check_conan_test_package()
    if what in ("vcpkg", "all"):
        check_vcpkg_manifest(version)
    for error in errors:
        print(f"error: {error}")
    if errors:
        return 1
    print(f"{what}: recipes consistent with snippets {version} (offline checks only)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
