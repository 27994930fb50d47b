# SPDX-License-Identifier: Apache-2.0
"""Conan 2 recipe for snippets, a header-only C++20 library.

It packages the local source tree (the recipe sits in packaging/conan/, two levels below the
repository root): `conan create packaging/conan` from the repository root.

The headers are installed by the project's own CMake install rules, so the package holds
exactly what `cmake --install` gives. The CMake config files that those rules also write are
removed: consumers get the ones Conan's CMakeDeps generates from package_info(), under the same
file name (snippets) and target name (snippets::snippets).
"""

import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, rmdir

required_conan_version = ">=2.0"


class SnippetsConan(ConanFile):
    name = "snippets"
    # Keep equal to project(VERSION) in CMakeLists.txt; packaging/check_recipes.py checks it.
    version = "0.1.0"
    package_type = "header-library"
    description = "Header-only JIT fusion of memory-bound neural-network subgraphs"
    topics = ("jit", "x86", "kernel-fusion", "header-only")
    license = "Apache-2.0"
    # CMake configures the project to run its install rules; the package itself is the same
    # for every configuration (see package_id).
    settings = "os", "arch", "compiler", "build_type"
    no_copy_source = True
    # The graph algorithms used are header-only, so Boost need not be compiled. A consumer
    # that needs compiled Boost libraries can still override this option.
    default_options = {"boost/*:header_only": True}

    @property
    def _repository_root(self):
        return os.path.join(self.recipe_folder, os.pardir, os.pardir)

    def export_sources(self):
        # exports_sources cannot reach above the recipe folder, so copy explicitly:
        # include/, cmake/ and the top-level CMakeLists.txt are all the install needs.
        root = self._repository_root
        for pattern in ("include/*", "cmake/*", "CMakeLists.txt", "LICENSE"):
            copy(self, pattern, src=root, dst=self.export_sources_folder)

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        # The public headers include xbyak and Boost.Graph, so both travel with the headers.
        # xbyak: 6.68 (Debian 12) through 7.x; snippets/target/x64/isa.hpp checks the version.
        self.requires("xbyak/[>=6.68 <8]", transitive_headers=True)
        self.requires("boost/[>=1.74]", transitive_headers=True)

    def package_id(self):
        self.info.clear()

    def generate(self):
        toolchain = CMakeToolchain(self)
        toolchain.cache_variables["SNIPPETS_BUILD_TESTS"] = False
        toolchain.cache_variables["SNIPPETS_BUILD_EXAMPLES"] = False
        toolchain.cache_variables["SNIPPETS_BUILD_BENCH"] = False
        toolchain.cache_variables["SNIPPETS_BUILD_PREBUILT"] = False  # a header-only package
        toolchain.cache_variables["SNIPPETS_INSTALL"] = True
        toolchain.generate()
        CMakeDeps(self).generate()

    def build(self):
        # Nothing to compile. Configuring here proves that the dependencies Conan provides
        # satisfy the project's find_package() calls before anything is packaged.
        CMake(self).configure()

    def package(self):
        CMake(self).install()
        rmdir(self, os.path.join(self.package_folder, "share", "cmake"))
        copy(self, "LICENSE", src=self.source_folder,
             dst=os.path.join(self.package_folder, "licenses"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "snippets")
        self.cpp_info.set_property("cmake_target_name", "snippets::snippets")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.requires = ["xbyak::xbyak", "boost::headers"]
        # OpenMP comes from the compiler, as in the CMake package (FindOpenMP there).
        compiler = str(self.settings.get_safe("compiler"))
        if compiler in ("gcc", "clang", "intel-cc"):
            self.cpp_info.cxxflags = ["-fopenmp"]
            self.cpp_info.sharedlinkflags = ["-fopenmp"]
            self.cpp_info.exelinkflags = ["-fopenmp"]
        elif compiler == "msvc":
            self.cpp_info.cxxflags = ["/openmp"]
