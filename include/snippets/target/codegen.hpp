// SPDX-License-Identifier: Apache-2.0
// snippets/target/codegen.hpp: what a backend supplies to turn a Linear IR into a kernel.
//
// backend_traits.hpp states what graphs and the tokenizer need from a traits type (its name,
// its fusable set, its argument budget). compile() needs more: a traits type that generates
// code also satisfies CodeGenerator<T>, whose parts each have their own fix-it message:
//
//   using Variant = MyIsa;                                   // an enum: what one compile targets
//   static Variant default_variant();                        // the best this host runs
//   static bool runs_here(Variant);                          // this host can execute it
//   static std::string_view variant_name(Variant);           // "avx2", "neon", ...
//   static RegisterModel registers(Variant);                 // lanes, vector and GP registers
//   template <class Self>                                    // vector registers kept from the
//   static int scratch_registers(const ir::LinearIR<Self>&, Variant);  // allocator for emitters
//                        (asked before the lowering pipeline runs: count the scratch of what the
//                        passes will make of the ops, e.g. a FusedMulAdd from Multiply and Add)
//   template <class Self>                                    // the code generator: ABI, loops,
//   static KernelCode emit(ir::LinearIR<Self>&, Variant, const EmitRequest<Self>&);  // ops
//
// `Self` is the traits type the LIR was built for: a user's traits type derived from a
// backend's (to fuse fewer ops, say) reuses its code generator. Optional hooks:
//   static bool native_bf16(Variant);  // the target converts to bf16 itself (default false)
//   static bool int8_products(Variant); // u8/i8 MatMuls summed in int32 (default false)
//   static bool int8_dot(Variant);      // ... by byte dot products (default false: words)
//   static constexpr bool int8_words = false;  // it has no 16-bit word path: byte dot products
//                        even with CompileOptions::native_int8 = false (default true)
//   static constexpr bool int8_signed_a = true; // its byte dot products read A signed (a u8 A
//                        is read as A - 128, ir::BrgemmShape::signed_a; default false: unsigned)
//   static bool column_ranges(Variant); // its Brgemm takes a run-time range of B's panels
//                        (work[1] columns from CallArgs::inner_begin; default false: calls
//                        of a MatMul kernel take all of N)
//   static constexpr bool dynamic_reductions = true;  // its code generator takes dynamic rows:
//                        reductions and Softmax over a run-time innermost extent (rewinds,
//                        run-time tails of ReduceAccumulate, Buffers of run-time rows;
//                        default false: compile() refuses them, snippets.compile.dynamic_reduce)
//
// The passes read the register model through the LoweringConfig compile() fills from
// registers() and scratch_registers(), so register allocation and spills follow the backend.
// KernelCode (runtime/kernel_abi.hpp) holds the code in memory the backend made executable
// after writing it, never writable and executable at once.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "snippets/backend_traits.hpp"
#include "snippets/error.hpp"
#include "snippets/ir/linear_ir.hpp"
#include "snippets/passes/pass.hpp"
#include "snippets/runtime/kernel_abi.hpp"

namespace snippets {

/// The registers a variant gives the passes.
struct RegisterModel {
  int lanes = 0;            // f32 elements per vector register
  int vector_registers = 0; // all of them; the emitters' scratch is subtracted per kernel
  /// General-purpose registers for data pointers and loop counters together (the kernel
  /// emitter's own scratch and the argument pointer excluded).
  int gp_registers = 0;
  /// Rows of A a Brgemm register tile may have (passes/brgemm_blocking.hpp, choose_tile).
  int max_tile_rows = 6;
};

/// What to add to a kernel for debugging (CompileOptions::debug). Without it (nullptr) a
/// backend emits exactly its plain kernel.
template <class T> struct Instrumentation {
  bool code_map = false;                                     // KernelCode::map
  bool fault_slots = false;                                  // DebugFrame::expr_slot
  std::span<const passes::CounterRegion<T>> counter_regions; // DebugFrame counters
};

/// One request to a backend's code generator.
template <class T> struct EmitRequest {
  /// Full-vector stores to outputs are non-temporal; the caller guarantees vector-aligned
  /// output addresses. A backend without such stores may ignore it.
  bool streaming = false;
  const Instrumentation<T>* instrumentation = nullptr;
};

/// A backend's code variant as CompileOptions carries it: a value of the backend's Variant
/// enum (x64::Isa::avx2, ...), checked against the traits type compile() runs with.
class VariantChoice {
public:
  template <class E>
  requires std::is_enum_v<E>
  constexpr VariantChoice(E e) // NOLINT(google-explicit-constructor): `.isa = Isa::avx2`
      : value_(static_cast<std::int64_t>(e)), type_(&tag<E>) {}

  /// The value as backend enum E. @throws [snippets.compile.bad_option] for another enum.
  template <class E> E as(std::string_view backend) const {
    if (type_ != &tag<E>)
      raise("snippets.compile.bad_option",
            "CompileOptions::isa holds a variant of another backend than '" + std::string(backend) +
                "'");
    return static_cast<E>(value_);
  }

private:
  template <class E> static constexpr char tag = 0;
  std::int64_t value_;
  const char* type_;
};

template <class T>
concept HasVariant = requires {
  typename T::Variant;
  requires std::is_enum_v<typename T::Variant>;
};

template <class T>
concept VariantQueries = requires(typename T::Variant v) {
  { T::default_variant() } -> std::same_as<typename T::Variant>;
  { T::runs_here(v) } -> std::same_as<bool>;
  { T::variant_name(v) } -> std::convertible_to<std::string_view>;
};

template <class T>
concept HasRegisterModel = requires(typename T::Variant v, const ir::LinearIR<T>& lir) {
  { T::registers(v) } -> std::same_as<RegisterModel>;
  { T::scratch_registers(lir, v) } -> std::same_as<int>;
};

template <class T>
concept EmitsKernels = requires(typename T::Variant v, ir::LinearIR<T>& lir,
                                const EmitRequest<T>& req) {
  { T::emit(lir, v, req) } -> std::same_as<KernelCode>;
};

template <class T>
concept CodeGenerator = BackendTraits<T> && HasVariant<T> && VariantQueries<T> &&
    HasRegisterModel<T> && EmitsKernels<T>;

/// Reports the first missing piece of a code-generating traits type with the line to write;
/// use as `static_assert(check_code_generator<T>())` (see check_backend_traits()).
template <class T> consteval bool check_code_generator() {
  if constexpr (!BackendTraits<T>) {
    return check_backend_traits<T>();
  } else if constexpr (!HasVariant<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: to compile kernels, backend traits need `using Variant = MyIsa;` "
                  "(an enum of what one compilation targets; one enumerator is enough)");
  } else if constexpr (!VariantQueries<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: to compile kernels, backend traits need `static Variant "
                  "default_variant(); static bool runs_here(Variant); static std::string_view "
                  "variant_name(Variant);`");
  } else if constexpr (!HasRegisterModel<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: to compile kernels, backend traits need `static RegisterModel "
                  "registers(Variant);` and `template <class Self> static int "
                  "scratch_registers(const ir::LinearIR<Self>&, Variant);`");
  } else if constexpr (!EmitsKernels<T>) {
    static_assert(detail::dependent_false<T>,
                  "snippets: to compile kernels, backend traits need `template <class Self> "
                  "static KernelCode emit(ir::LinearIR<Self>&, Variant, const "
                  "EmitRequest<Self>&);` (the code generator)");
  }
  return true;
}

/// T::dynamic_reductions when T has that hook, else false.
template <class T> constexpr bool backend_dynamic_reductions() {
  if constexpr (requires { T::dynamic_reductions; })
    return T::dynamic_reductions;
  else
    return false;
}

/// T::native_bf16(v) when T has that hook, else false.
template <class T> bool backend_native_bf16(typename T::Variant v) {
  if constexpr (requires { T::native_bf16(v); })
    return T::native_bf16(v);
  else
    return false;
}

/// T::int8_products(v) when T has that hook, else false: whether the target multiplies u8/i8
/// operands as bytes with int32 sums (passes/lower_brgemm.hpp refuses them otherwise).
template <class T> bool backend_int8_products(typename T::Variant v) {
  if constexpr (requires { T::int8_products(v); })
    return T::int8_products(v);
  else
    return false;
}

/// T::column_ranges(v) when T has that hook, else false: whether the target's Brgemm and
/// BrgemmCopyB take the columns of a call from the call (ir::Brgemm::column_range).
template <class T> bool backend_column_ranges(typename T::Variant v) {
  if constexpr (requires { T::column_ranges(v); })
    return T::column_ranges(v);
  else
    return false;
}

/// T::int8_dot(v) when T has that hook, else false: whether the target's integer products use
/// byte dot products (four depths a step) rather than 16-bit words (two).
template <class T> bool backend_int8_dot(typename T::Variant v) {
  if constexpr (requires { T::int8_dot(v); })
    return T::int8_dot(v);
  else
    return false;
}

/// T::int8_words when T has that member, else true: whether the target can also sum u8/i8
/// products as 16-bit words (what CompileOptions::native_int8 = false asks for).
template <class T> constexpr bool backend_int8_words() {
  if constexpr (requires { T::int8_words; })
    return T::int8_words;
  else
    return true;
}

} // namespace snippets
