# SPDX-License-Identifier: Apache-2.0
"""Conan 2 test_package: builds and runs a program against the snippets package just created.

Run by `conan create packaging/conan`, or alone with `conan test packaging/conan/test_package
snippets/0.1.0`. As a consumer of the package (not a package itself) it has no name or version.
"""

import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, cmake_layout


class SnippetsTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"
    generators = "CMakeDeps", "CMakeToolchain"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if can_run(self):
            self.run(os.path.join(self.cpp.build.bindir, "test_package"), env="conanrun")
