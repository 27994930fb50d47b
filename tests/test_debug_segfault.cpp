// SPDX-License-Identifier: Apache-2.0
// debug/segfault_detector.hpp: a kernel given a bad pointer, run in a child process, must die
// by SIGSEGV after naming the kernel, the expression, its emitter and the faulting address.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "host_skips.hpp"
#include "snippets/compile.hpp"

using namespace snippets;
constexpr auto f32 = ElementType::f32;

namespace {

struct ChildResult {
  int status = 0;
  std::string err; // what the child wrote to stderr
};

/// Runs `f` in a child process with stderr captured; the child exits 0 if `f` returns.
template <class F> ChildResult in_child(F&& f) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    ::signal(SIGSEGV, SIG_DFL); // not doctest's handler: the default action, as in a program
    f();
    ::_exit(0);
  }
  ::close(fds[1]);
  ChildResult r;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) r.err.append(buf, std::size_t(n));
  ::close(fds[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

/// y = a + b on 256 elements.
ir::Graph<x64::Traits> add_graph() {
  ir::Graph<x64::Traits> g;
  auto a = g.parameter(f32, {256}, "a");
  auto b = g.parameter(f32, {256}, "b");
  g.result(g.add(a, b), "y");
  return g;
}

/// One thread, no OpenMP: the child must not depend on the parent's thread pool.
void run_serial(const CompiledKernel& k, const void* a, const void* b, void* y) {
  const void* in[] = {a, b};
  void* out[] = {y};
  k.run_unchecked(in, out, {.threads = 1, .parallel_for = [](int n, const auto& body) {
                              for (int i = 0; i < n; ++i) body(i);
                            }});
}

bool died_by_segv(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV; }

} // namespace

TEST_CASE("debug segfault detector: a bad input pointer names the Load that faulted") {
  for (auto isa : {x64::Isa::avx2, x64::Isa::avx512}) {
    if (!x64::host_supports(isa)) {
      snippets::test::skip_on_host(x64::to_string(isa));
      continue;
    }
    CAPTURE(x64::to_string(isa));
    auto k =
        compile(add_graph(), {.isa = isa, .name = "faulty", .debug = {.segfault_detector = true}});
    std::vector<float> a(256, 1.0f), y(256);
    const auto r = in_child([&] {
      debug::install_segfault_detector(); // on top of SIG_DFL, as compile() would in a program
      run_serial(k, a.data(), reinterpret_cast<const void*>(std::uintptr_t{0x1000}), y.data());
    });
    CAPTURE(r.err);
    CHECK(died_by_segv(r.status));
    CHECK(r.err.find(std::string("snippets: SIGSEGV in JIT kernel 'faulty' (") +
                     std::string(x64::to_string(isa)) + ")\n") != std::string::npos);
    CHECK(r.err.find("  expression: ") != std::string::npos);
    CHECK(r.err.find("Load x") != std::string::npos);
    CHECK(r.err.find("'b' (%1)") != std::string::npos);
    CHECK(r.err.find("  emitter:    load: vmovups, full vector\n") != std::string::npos);
    CHECK(r.err.find("  faulting address: 0x0000000000001000\n") != std::string::npos);
    CHECK(r.err.find("  pc: kernel+0x") != std::string::npos);
  }
}

TEST_CASE("debug segfault detector: a bad output pointer names the Store") {
  auto k = compile(add_graph(), {.name = "bad_out", .debug = {.segfault_detector = true}});
  std::vector<float> a(256, 1.0f), b(256, 2.0f);
  const auto r = in_child([&] {
    debug::install_segfault_detector();
    run_serial(k, a.data(), b.data(), reinterpret_cast<void*>(std::uintptr_t{0x2000}));
  });
  CAPTURE(r.err);
  CHECK(died_by_segv(r.status));
  CHECK(r.err.find("Store x") != std::string::npos);
  CHECK(r.err.find("'y'") != std::string::npos);
  CHECK(r.err.find("  emitter:    store: ") != std::string::npos);
  CHECK(r.err.find("  faulting address: 0x0000000000002000\n") != std::string::npos);
}

TEST_CASE("debug segfault detector: faults outside kernels keep their usual death") {
  compile(add_graph(), {.debug = {.segfault_detector = true}});
  const auto r = in_child([] {
    debug::install_segfault_detector();
    volatile std::uintptr_t addr = 8;
    *reinterpret_cast<volatile int*>(addr) = 1;
  });
  CHECK(died_by_segv(r.status));
  CHECK(r.err.find("snippets:") == std::string::npos);
}

TEST_CASE("debug segfault detector: the instrumented kernel computes the same result") {
  auto k = compile(add_graph(), {.debug = {.segfault_detector = true}});
  std::vector<float> a(256), b(256), y(256);
  for (int i = 0; i < 256; ++i) a[std::size_t(i)] = float(i), b[std::size_t(i)] = 0.5f;
  run_serial(k, a.data(), b.data(), y.data());
  for (int i = 0; i < 256; ++i) CHECK(y[std::size_t(i)] == float(i) + 0.5f);
  k.run({reference::Tensor::from_values(f32, {256}, {1.0}),
         reference::Tensor::from_values(f32, {256}, {2.0})},
        {.threads = 2});
}
