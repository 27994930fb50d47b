// SPDX-License-Identifier: Apache-2.0
// snippets/program/execution_context.hpp: the per-run memory of a Program.
//
// A Program is immutable and shared; an ExecutionContext holds the arena its intermediate
// values live in (the seed GPU plugin's network, next to its program). Make one per thread
// or stream with Program::make_context() and reuse it across runs: the arena is allocated
// when the context is made (a dynamic model's grows to the largest shapes it has run).
// A context is not thread-safe; two threads running at once need two contexts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace snippets {

class ExecutionContext {
public:
  static constexpr std::size_t alignment = 64;

  explicit ExecutionContext(std::int64_t bytes) { reserve(bytes); }

  /// Grows the arena to at least `bytes` (a dynamic model's run, for its shapes); what it held
  /// is not kept.
  void reserve(std::int64_t bytes) {
    if (bytes <= bytes_) return;
    const auto size = (static_cast<std::size_t>(bytes) + alignment - 1) / alignment * alignment;
    arena_.reset(static_cast<std::byte*>(std::aligned_alloc(alignment, size)));
    if (!arena_) {
      bytes_ = 0;
      throw std::bad_alloc();
    }
    bytes_ = bytes;
  }

  std::byte* arena() { return arena_.get(); }
  std::int64_t bytes() const { return bytes_; }

private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::int64_t bytes_ = 0;
  std::unique_ptr<std::byte, Free> arena_;
};

} // namespace snippets
