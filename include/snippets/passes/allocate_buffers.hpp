// SPDX-License-Identifier: Apache-2.0
// snippets/passes/allocate_buffers.hpp: AllocateBuffers gives every Buffer a data pointer and a
// place in the kernel's per-thread scratchpad (the seed's AllocateBuffers).
//
// Three steps, as the seed names them:
//  - DefineBufferClusters: a Buffer written in the same innermost loop, and after, the last
//    read of another (each iteration reads the old row's elements before it writes the new
//    ones at the same place) reuses that Buffer's memory in place: both form one cluster;
//  - SetBufferRegGroup: clusters share one data pointer unless some loop moves their pointers
//    differently; the conflicts form a graph and Boost's sequential_vertex_coloring picks the
//    pointer groups (ir/graph_view.hpp);
//  - SolveBufferMemory: clusters whose lifetimes (first write to last read, in LIR order)
//    overlap get disjoint bytes; the smallest arena found greedily (support/memory_plan.hpp).
// A Buffer's Loads and Stores then use data pointer `num_inputs + num_outputs + group` and add
// the cluster's offset. LinearIR::buffer_pointers and ::scratch_bytes tell the kernel and the
// runtime what to pass; each pointer group costs one general-purpose register.
// LoweringConfig::optimize_buffers = false is the debugging mode: every Buffer has its own
// memory and its own pointer.
// In a dynamic LIR a Buffer is a row of a length known at run time: the plan counts rows
// instead of bytes, every cluster keeps a pointer of its own (the rows' offsets are known only
// at run time), and LinearIR::buffer_rows says which row each pointer starts at.
// @pre InitLoops ran (ports exist); @post run CleanRepeatedDataPointerShifts next.
#pragma once

#include <numeric>

#include "snippets/ir/graph_view.hpp"
#include "snippets/passes/lir_queries.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/passes/properties.hpp"
#include "snippets/support/memory_plan.hpp"

namespace snippets::passes {

struct AllocateBuffers {
  using pass_tag = lir_pass_tag;
  static constexpr std::string_view name = "AllocateBuffers";
  using needs = Properties<property::BuffersInserted, property::LoopPortsInitialized>;
  using establishes = Properties<property::BuffersAllocated>;

  template <class T> void run(ir::LinearIR<T>& lir, PassContext<T>& ctx) const {
    struct Use {
      ir::Expression<T>* buffer;
      ir::Expression<T>* store;
      std::vector<ir::Expression<T>*> loads;
      std::size_t def = 0, end = 0, cluster = 0;
    };
    lir.renumber();
    std::vector<Use> uses;
    for (auto& e : lir) {
      if (!std::holds_alternative<ir::Buffer>(e->op)) continue;
      Use u{e.get(), &e->input_expr(0), {}, 0, 0, 0};
      u.def = u.end = u.store->order;
      for (auto& c : e->output(0).consumers()) {
        u.loads.push_back(&c.owner());
        u.end = std::max(u.end, c.owner().order);
      }
      uses.push_back(std::move(u));
    }
    if (uses.empty()) return;
    const bool optimize = ctx.config.optimize_buffers;

    // DefineBufferClusters: cluster c holds members; `last` is the member whose reads end it
    std::vector<std::size_t> last; // per cluster
    for (std::size_t b = 0; b < uses.size(); ++b) {
      uses[b].cluster = last.size();
      for (std::size_t c = 0; optimize && c < last.size(); ++c) {
        const Use& a = uses[last[c]];
        // a's last read is in the loop that writes b, before b's store
        const bool in_place =
            a.end < uses[b].def && std::any_of(a.loads.begin(), a.loads.end(), [&](auto* l) {
              return l->order == a.end && l->loop_ids == uses[b].store->loop_ids;
            });
        if (in_place) {
          uses[b].cluster = c;
          break;
        }
      }
      if (uses[b].cluster == last.size())
        last.push_back(b);
      else
        last[uses[b].cluster] = b;
    }
    const std::size_t clusters = last.size();

    // SetBufferRegGroup: clusters conflict when one loop shifts their pointers differently
    std::map<const void*, std::size_t> cluster_of; // Load/Store expression -> cluster
    for (const Use& u : uses) {
      cluster_of[u.store] = u.cluster;
      for (auto* l : u.loads) cluster_of[l] = u.cluster;
    }
    ir::detail::EdgeList conflicts;
    for (const ir::LoopInfo& info : lir.loops().loops())
      for (const ir::LoopPort& p : info.ports)
        for (const ir::LoopPort& q : info.ports) {
          if (!cluster_of.count(p.expr) || !cluster_of.count(q.expr)) continue;
          const std::size_t a = cluster_of[p.expr], b = cluster_of[q.expr];
          if (a < b && (p.ptr_increment != q.ptr_increment ||
                        p.finalization_offset != q.finalization_offset))
            conflicts.push_back({static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)});
        }
    std::vector<std::size_t> group(clusters);
    std::iota(group.begin(), group.end(), std::size_t{0});
    if (optimize && !lir.dynamic) group = ir::detail::colour_vertices(clusters, conflicts);
    const std::size_t groups = *std::max_element(group.begin(), group.end()) + 1;
    const std::size_t n_io = lir.num_inputs + lir.num_outputs;
    if (int(groups) > ctx.config.gp_registers) // pointers left after the kernel arguments
      raise("snippets.compile.too_many_buffers",
            "the kernel needs " + std::to_string(groups) + " buffer pointers besides its " +
                std::to_string(n_io) +
                " arguments, more than the registers allow; split the "
                "subgraph (or leave optimize_buffers on)");

    // SolveBufferMemory: one request per cluster, live from its first write to its last read
    std::vector<BufferRequest> requests(clusters);
    for (const Use& u : uses) {
      BufferRequest& r = requests[u.cluster];
      const std::int64_t bytes = lir.dynamic ? 1 : std::get<ir::Buffer>(u.buffer->op).elements * 4;
      const bool first = r.bytes == 0;
      r.bytes = std::max(r.bytes, bytes);
      r.def = first ? u.def : std::min(r.def, u.def);
      r.end = first ? u.end : std::max(r.end, u.end);
      if (!optimize) r.def = 0, r.end = lir.size(); // debugging: nothing shares memory
    }
    const MemoryPlan plan = plan_memory(requests, lir.dynamic ? 1 : 64); // dynamic: in rows

    if (lir.dynamic) {
      lir.buffer_rows.assign(plan.offsets.begin(), plan.offsets.end()); // a pointer per cluster
      lir.scratch_rows = plan.total_bytes;
    }
    for (const Use& u : uses) {
      const std::size_t index = n_io + group[u.cluster];
      const std::int64_t offset = lir.dynamic ? 0 : plan.offsets[u.cluster];
      auto& tag = std::get<ir::Buffer>(u.buffer->op);
      tag.offset = offset;
      tag.reg_group = group[u.cluster];
      u.buffer->data_index = index;
      for (ir::Expression<T>* access : u.loads) retarget(*access, index, offset);
      retarget(*u.store, index, offset);
      for (std::size_t id = 0; id < lir.loops().size(); ++id)
        for (ir::LoopPort& p : lir.loops().at(id).ports)
          if (cluster_of.count(p.expr) && cluster_of[p.expr] == u.cluster) p.data_index = index;
    }
    lir.buffer_pointers = groups;
    lir.scratch_bytes = lir.dynamic ? 0 : plan.total_bytes;
    ctx.config.gp_registers -= static_cast<int>(groups);
  }

private:
  template <class T>
  static void retarget(ir::Expression<T>& access, std::size_t index, std::int64_t offset_bytes) {
    access.data_index = index;
    std::visit(
        [&](auto& tag) {
          if constexpr (requires { tag.offset; }) tag.offset += offset_bytes / 4;
        },
        access.op);
  }
};

} // namespace snippets::passes
