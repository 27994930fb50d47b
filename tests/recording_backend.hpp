// SPDX-License-Identifier: Apache-2.0
// tests/recording_backend.hpp: a backend whose code generator writes text instead of machine
// code, written only against the public seam (backend_traits.hpp, target/codegen.hpp).
//
// compile<RecordingBackend>(body).code() is the emitted sequence, one line per emitter call:
//   prologue: 2 in 1 out, spill slots 0, counter slots 0
//   loop_begin #0 work 37 step 4
//   load v0 <- arg0 x4
//   Add v0 <- v0, v1
//   ...
// so passes can be tested against golden output without executing x86-64 code, on a register
// model unlike x86-64's (16 vector registers of 4 lanes, 8 general-purpose ones), and a backend
// author sees what the library asks of each emitter. Its kernels have no entry point: run()
// refuses them ([snippets.run.emit_only]).
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "snippets/backend_traits.hpp"
#include "snippets/ir/lir_printer.hpp"
#include "snippets/runtime/compiled_kernel.hpp"
#include "snippets/target/codegen.hpp"

namespace snippets::test {

enum class RecordingIsa { lanes4 };

/// " v2 <- v0, v1": the output registers, then the input registers.
template <class T> void record_registers(std::ostream& os, const ir::Expression<T>& e) {
  for (std::size_t i = 0; i < e.num_outputs(); ++i)
    os << (i ? "," : "") << ir::detail::reg_name(e.out_desc(i).reg);
  if (e.num_inputs()) os << " <-";
  for (std::size_t i = 0; i < e.num_inputs(); ++i)
    os << (i ? "," : "") << ir::detail::reg_name(e.in_desc(i).reg);
}

/// The emitter table: how each op is "emitted". The primary template writes the op's name, a
/// value it carries, its output registers and its input registers; the specializations write
/// memory accesses, loops and spills.
template <class Tag> struct RecordingEmitter {
  template <class T>
  static void emit(std::ostream& os, const ir::Expression<T>& e, const Tag& tag) {
    os << e.op_name();
    if constexpr (requires { os << tag.value; }) os << ' ' << tag.value;
    record_registers(os, e);
  }
};

template <> struct RecordingEmitter<ir::Load> {
  template <class T>
  static void emit(std::ostream& os, const ir::Expression<T>& e, const ir::Load& tag) {
    os << "load" << ir::detail::reg_name(e.out_desc(0).reg) << " <- arg" << e.data_index << " x"
       << tag.count;
  }
};

template <> struct RecordingEmitter<ir::Store> {
  template <class T>
  static void emit(std::ostream& os, const ir::Expression<T>& e, const ir::Store& tag) {
    os << "store arg" << e.data_index << " <-" << ir::detail::reg_name(e.in_desc(0).reg) << " x"
       << tag.count;
  }
};

template <> struct RecordingEmitter<ir::LoopBegin> {
  template <class T>
  static void emit(std::ostream& os, const ir::Expression<T>&, const ir::LoopBegin& tag,
                   const ir::LoopInfo& loop) {
    os << "loop_begin #" << tag.loop_id << " work " << loop.work_amount << " step "
       << loop.increment;
  }
};

template <> struct RecordingEmitter<ir::LoopEnd> {
  template <class T>
  static void emit(std::ostream& os, const ir::Expression<T>&, const ir::LoopEnd& tag,
                   const ir::LoopInfo&) {
    os << "loop_end #" << tag.loop_id;
  }
};

template <> struct RecordingEmitter<ir::Spill> {
  template <class T>
  static void emit(std::ostream& os, const ir::Expression<T>& e, const ir::Spill& tag) {
    os << "spill slot" << tag.slot << " <-" << ir::detail::reg_name(e.in_desc(0).reg);
  }
};

template <> struct RecordingEmitter<ir::Reload> {
  template <class T>
  static void emit(std::ostream& os, const ir::Expression<T>& e, const ir::Reload& tag) {
    os << "reload" << ir::detail::reg_name(e.out_desc(0).reg) << " <- slot" << tag.slot;
  }
};

/// Fuses the elementwise arithmetic and the innermost-axis reductions; f32 in and out.
struct RecordingBackend {
  static constexpr std::string_view name = "recording";
  static constexpr int data_pointer_registers = 6;
  static bool host_supported() { return true; }
  template <class Op>
  static constexpr bool fusable =
      std::is_same_v<Op, ir::Add> || std::is_same_v<Op, ir::Subtract> ||
      std::is_same_v<Op, ir::Multiply> || std::is_same_v<Op, ir::Divide> ||
      std::is_same_v<Op, ir::Maximum> || std::is_same_v<Op, ir::Minimum> ||
      std::is_same_v<Op, ir::Relu> || std::is_same_v<Op, ir::Exp> ||
      std::is_same_v<Op, ir::Negative> || std::is_same_v<Op, ir::ReduceSum> ||
      std::is_same_v<Op, ir::ReduceMax>;
  template <class Op> static bool supports(const Op& op) {
    if constexpr (requires { op.keep_dims; })
      return op.keep_dims && op.axes.size() == 1; // innermost, checked by the tokenizer
    else
      return true;
  }

  using Variant = RecordingIsa;
  static RecordingIsa default_variant() { return RecordingIsa::lanes4; }
  static bool runs_here(RecordingIsa) { return true; }
  static std::string_view variant_name(RecordingIsa) { return "lanes4"; }
  static RegisterModel registers(RecordingIsa) {
    return {.lanes = 4, .vector_registers = 16, .gp_registers = 8};
  }
  template <class Self> static int scratch_registers(const ir::LinearIR<Self>&, RecordingIsa) {
    return 0;
  }

  template <class Self>
  static KernelCode emit(ir::LinearIR<Self>& lir, RecordingIsa, const EmitRequest<Self>&) {
    std::ostringstream os;
    os << "prologue: " << lir.num_inputs << " in " << lir.num_outputs << " out, spill slots "
       << lir.spill_slots << ", counter slots " << lir.counter_slots << '\n';
    for (const auto& e : lir) {
      std::visit(
          [&](const auto& tag) {
            using Tag = std::decay_t<decltype(tag)>;
            if constexpr (std::is_same_v<Tag, ir::Parameter> || std::is_same_v<Tag, ir::Result>)
              return; // arguments: read by the prologue, written by Stores
            else if constexpr (std::is_same_v<Tag, ir::LoopBegin> ||
                               std::is_same_v<Tag, ir::LoopEnd>)
              RecordingEmitter<Tag>::emit(os, *e, tag, lir.loops().at(tag.loop_id));
            else
              RecordingEmitter<Tag>::emit(os, *e, tag);
            os << '\n';
          },
          e->op);
    }
    os << "epilogue\n";
    auto text = std::make_shared<const std::string>(os.str());
    KernelCode code;
    code.bytes = {reinterpret_cast<const std::uint8_t*>(text->data()), text->size()};
    code.text_bytes = static_cast<std::uint32_t>(text->size());
    code.owner = std::move(text);
    return code; // no entry point
  }
};

static_assert(check_code_generator<RecordingBackend>());

/// The recorded text of a kernel.
inline std::string recorded(const CompiledKernel& k) {
  const auto bytes = k.code();
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

} // namespace snippets::test
