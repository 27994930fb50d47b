// SPDX-License-Identifier: Apache-2.0
// snippets/program/kernel_cache.hpp: KernelCache, compiled kernels shared by equal bodies.
//
//   snippets::KernelCache cache(64);                       // or default_kernel_cache()
//   CompiledKernel k = compile_cached(body, {}, &cache);   // compiles once per distinct key
//   auto s = cache.stats();                                // hits, misses, evictions, size
//
// The key is everything that changes the generated code: the body's structure (op tags with
// their attributes bit for bit, edges, element types, shapes, input layouts; not node names),
// the backend traits and pipeline types, the resolved variant (x86-64: the ISA, so SNIPPETS_MAX_ISA
// is in it) and the CompileOptions that reach emission (fma, unroll, native_bf16, streaming
// threshold, buffer planning). It is kept in full, not only its hash, so two bodies never share a
// kernel by a hash collision. Invariants:
//  - thread-safe; a key is compiled once even when many threads ask for it at the same time
//    (the others wait for that compilation and count as hits);
//  - bounded: beyond `capacity` the least recently used kernel is dropped (kernels already
//    handed out stay valid: a CompiledKernel shares its code);
//  - a compilation that throws leaves no entry, and every waiter gets the same error.
// Kernels compiled with debugging switches (dumps, counters, detector, perf map) are
// never cached: they carry the name and state of the one compile that asked for them. Nor are
// compiles that ask for a trace, timings or the verifier, which only a real compile gives.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>

#include "snippets/compile.hpp"
#include "snippets/ir/printer.hpp"

namespace snippets {

struct KernelCacheStats {
  std::uint64_t hits = 0, misses = 0, evictions = 0;
  std::size_t size = 0, capacity = 0;
};

class KernelCache {
public:
  static constexpr std::size_t default_capacity = 512;

  explicit KernelCache(std::size_t capacity = default_capacity) : capacity_(capacity) {}
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  /// The kernel stored under `key`, or the one `make()` returns (called once per key, outside
  /// the lock), which is then stored. A capacity of 0 stores nothing.
  template <class Make> CompiledKernel get_or_compile(const std::string& key, Make&& make) {
    std::promise<CompiledKernel> promise;
    {
      std::unique_lock lock(mutex_);
      if (const auto it = index_.find(key); it != index_.end()) {
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second); // most recently used first
        std::shared_future<CompiledKernel> ready = it->second->kernel;
        lock.unlock();
        return ready.get(); // waits while another thread compiles it
      }
      ++misses_;
      if (capacity_ > 0) {
        lru_.push_front({key, promise.get_future().share()});
        index_.emplace(lru_.front().key, lru_.begin());
        evict_beyond(capacity_);
      }
    }
    try {
      CompiledKernel k = make();
      promise.set_value(k);
      return k;
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard lock(mutex_);
      if (const auto it = index_.find(key); it != index_.end()) {
        lru_.erase(it->second);
        index_.erase(it);
      }
      throw;
    }
  }

  KernelCacheStats stats() const {
    std::lock_guard lock(mutex_);
    return {hits_, misses_, evictions_, lru_.size(), capacity_};
  }
  /// Drops kernels beyond the new capacity, least recently used first.
  void set_capacity(std::size_t capacity) {
    std::lock_guard lock(mutex_);
    capacity_ = capacity;
    evict_beyond(capacity_);
  }
  /// Drops every kernel and zeroes the counters.
  void clear() {
    std::lock_guard lock(mutex_);
    index_.clear();
    lru_.clear();
    hits_ = misses_ = evictions_ = 0;
  }

private:
  struct Entry {
    std::string key;
    std::shared_future<CompiledKernel> kernel;
  };

  void evict_beyond(std::size_t n) {
    while (lru_.size() > n) {
      index_.erase(lru_.back().key);
      lru_.pop_back();
      ++evictions_;
    }
  }

  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::list<Entry> lru_; // most recently used first; nodes never move, so keys stay put
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_; // views of lru_ keys
  std::uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

/// The process-wide cache that Programs use by default. Its capacity is
/// SNIPPETS_KERNEL_CACHE_CAPACITY when that is set (0 turns caching off), else 512.
inline KernelCache& default_kernel_cache() {
  static KernelCache cache([] {
    const char* v = std::getenv("SNIPPETS_KERNEL_CACHE_CAPACITY");
    std::size_t n = KernelCache::default_capacity;
    if (v && *v) {
      const std::string_view s(v);
      const auto r = std::from_chars(s.data(), s.data() + s.size(), n);
      if (r.ec != std::errc{} || r.ptr != s.data() + s.size())
        raise("snippets.cache.bad_env", "SNIPPETS_KERNEL_CACHE_CAPACITY='" + std::string(s) +
                                            "' is not a count of kernels; use e.g. 512, or 0 "
                                            "to turn the cache off");
    }
    return n;
  }());
  return cache;
}

namespace detail {

/// Appends the exact bit pattern of `v` (to_chars round-trips, and keeps -0 and NaN apart).
inline void append_exact(std::string& key, double v) {
  char buf[32];
  key.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  key += ',';
}

/// The body's structure, exactly: one line per node without its name.
template <class T> void append_body(std::string& key, const ir::Graph<T>& body) {
  for (ir::NodeId id = 0; id < body.size(); ++id) {
    const ir::Node<T>& n = body.node(id);
    key.append(n.op_name());
    if (const auto* c = std::get_if<ir::Constant>(&n.op)) {
      key += "{values=";
      for (double v : c->values) append_exact(key, v); // the printer shortens long lists
      key += '}';
    } else {
      key += ir::detail::format_attributes<T>(n.op);
    }
    key += '(';
    for (const ir::Output& o : n.inputs)
      key.append(std::to_string(o.node)).append(":").append(std::to_string(o.port)).append(",");
    key += ")->";
    for (const ir::TensorType& t : n.outputs) key.append(t.to_string()).append(",");
    key += '\n';
  }
}

} // namespace detail

/// The cache key of compile<T, Lowering, DataFlow>(body, opt) on this host.
template <class T, class Lowering = passes::DefaultLowering,
          class DataFlow = passes::DefaultDataFlow>
std::string kernel_cache_key(const ir::Graph<T>& body, const CompileOptions& opt = {}) {
  std::string key;
  key.append(typeid(T).name()).append("|").append(typeid(Lowering).name()).append("|");
  key.append(typeid(DataFlow).name()).append("|");
  key.append(T::variant_name(detail::chosen_variant<T>(opt)));
  key.append("|fma=").append(opt.fma ? "1" : "0");
  key.append("|unroll=").append(std::to_string(opt.unroll));
  key.append("|buffers=").append(opt.optimize_buffers ? "1" : "0");
  key.append("|bf16=").append(opt.native_bf16 ? "1" : "0");
  key.append("|accuracy=").append(opt.accuracy == Accuracy::relaxed ? "relaxed" : "standard");
  key.append("|int8=").append(opt.native_int8 ? "1" : "0");
  key.append("|nt=").append(std::to_string(opt.streaming_threshold_bytes));
  key.append(",").append(std::to_string(opt.streaming_max_code_bytes)).append("\n");
  detail::append_body(key, body);
  return key;
}

/// compile(), through `cache`. Bodies with debugging switches on (see the header comment) and
/// a null cache compile directly.
template <class T, class Lowering = passes::DefaultLowering,
          class DataFlow = passes::DefaultDataFlow>
CompiledKernel compile_cached(const ir::Graph<T>& body, const CompileOptions& opt = {},
                              KernelCache* cache = &default_kernel_cache()) {
  auto make = [&] { return compile<T, Lowering, DataFlow>(body, opt); };
  if (!cache || opt.trace || opt.timings || opt.verify) return make();
  const debug::ResolvedDebug dbg = debug::resolve(opt.debug);
  if (dbg.dump.enabled() || !dbg.jit_dump.empty() || dbg.perf_map || dbg.code_map ||
      dbg.counters != debug::Counters::off)
    return make();
  return cache->get_or_compile(kernel_cache_key<T, Lowering, DataFlow>(body, opt), make);
}

} // namespace snippets
