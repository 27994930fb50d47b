// SPDX-License-Identifier: Apache-2.0
// snippets/passes/properties.hpp: the IR properties passes need, establish and invalidate,
// as types, so that a pipeline's order is checked when it compiles (pipeline.hpp).
//
// A pass declares any of four lists (each defaults to empty):
//   using needs = Properties<property::LoopsMarked>;          // must hold when it runs
//   using before = Properties<property::LoadsStoresInserted>; // must not hold yet
//   using establishes = Properties<property::LoopPortsInitialized>;
//   using invalidates = Properties<property::LiveRangesKnown>; // no longer true after it
// A pass that changes the IR in a way the properties describe must say so; one that declares
// nothing is taken to only observe. Users add properties of their own the same way: any
// type can be a property, and a user's passes can need what another of their passes
// establishes. The names of these types are what the compiler prints when a pipeline is out
// of order.
#pragma once

#include <type_traits>

namespace snippets::passes {

/// A set of properties (types); order does not matter, duplicates are harmless.
template <class... Ps> struct Properties {};

/// Properties of a Linear IR (the lowering pipelines) and of a Subgraph body (the data-flow
/// pipelines). The pass that establishes each one is named; LowerBrgemm establishes the
/// control-flow ones at once for MatMul bodies.
namespace property {
// ---- Subgraph body (data flow) ----
struct CompositeReductionsDecomposed {}; // DecomposeCompositeReductions: ReduceMean ... ReduceL2
struct SoftmaxDecomposed {};             // DecomposeSoftmax: elementwise Softmaxes are reductions
struct QuantizationDecomposed {};        // DecomposeQuantization: FakeQuantize, Quantize are ops
struct InputTransposesFolded {};         // FuseTransposeIntoParameter
struct OutputTransposesFolded {};        // FuseTransposeIntoResult
struct RanksAligned {};                  // Canonicalize: every value has the domain's rank
struct ConstantsAsScalars {};            // ConvertConstantsToScalars
struct PowersStatic {};                  // ConvertPowerToPowerStatic
struct ComputesInF32 {};                 // AlignElementTypes

// ---- Linear IR (lowering) ----
struct LoopsMarked {};          // MarkLoops: every expression knows its loop nest
struct ReductionsDecomposed {}; // DecomposeReductions: ReduceInit/Accumulate/HorizonReduce
struct BuffersInserted {};      // InsertBuffers: rows kept between innermost loops
struct LoadsStoresInserted {};  // InsertLoadStore: memory access is explicit
struct BroadcastsExplicit {};   // InsertBroadcastMove
struct LoopPortsInitialized {}; // InitLoops: pointer increments and finalization offsets
struct BuffersAllocated {};     // AllocateBuffers: data pointers and scratch offsets
struct PointerShiftsUnique {};  // CleanRepeatedDataPointerShifts
struct LoopsInserted {};        // InsertLoops: LoopBegin/LoopEnd expressions
struct LiveRangesKnown {};      // InitLiveRanges (kept current by InsertRegSpills)
struct RegistersAssigned {};    // AssignRegisters
struct TailsSpecialized {};     // InsertSpecificIterations: unrolled main body and tails
} // namespace property

/// What compile() converts to a Linear IR: the end of its data-flow pipeline.
using LinearIRNeeds =
    Properties<property::SoftmaxDecomposed, property::QuantizationDecomposed,
               property::RanksAligned, property::ConstantsAsScalars, property::ComputesInF32>;
/// What a backend's code generator reads: the end of compile()'s lowering pipeline.
using EmissionNeeds =
    Properties<property::ReductionsDecomposed, property::LoadsStoresInserted,
               property::BroadcastsExplicit, property::LoopPortsInitialized,
               property::BuffersAllocated, property::PointerShiftsUnique, property::LoopsInserted,
               property::RegistersAssigned, property::TailsSpecialized>;

/// Unevaluated only: joins two sets (the folds of props:: below).
template <class... As, class... Bs>
Properties<As..., Bs...> operator+(Properties<As...>, Properties<Bs...>);

namespace props {
template <class Set, class P> struct Contains;
template <class... Ps, class P>
struct Contains<Properties<Ps...>, P> : std::bool_constant<(std::is_same_v<Ps, P> || ...)> {};
template <class Set, class P> inline constexpr bool contains = Contains<Set, P>::value;

/// The members of A that are (`in_b`) or are not in B.
template <class A, class B, bool in_b> struct Filter;
template <class... As, class B, bool in_b> struct Filter<Properties<As...>, B, in_b> {
  using type =
      decltype((std::conditional_t<contains<B, As> == in_b, Properties<As>, Properties<>>{} + ... +
                Properties<>{}));
};
/// A without the members of B; A and B in common.
template <class A, class B> using Minus = Filter<A, B, false>;
template <class A, class B> using Intersect = Filter<A, B, true>;

/// The first member of `List` that is (`in_have`) or is not in `Have` (void: none).
template <class Have, class List, bool in_have> struct FirstWhere { using type = void; };
template <class Have, class P, class... Ps, bool in_have>
struct FirstWhere<Have, Properties<P, Ps...>, in_have> {
  using type = std::conditional_t<contains<Have, P> == in_have, P,
                                  typename FirstWhere<Have, Properties<Ps...>, in_have>::type>;
};
/// The first member of `Needed` not in `Have`; of `Forbidden` already in it.
template <class Have, class Needed> using FirstMissing = FirstWhere<Have, Needed, false>;
template <class Have, class Forbidden> using FirstPresent = FirstWhere<Have, Forbidden, true>;
} // namespace props

namespace detail {
template <class P> auto needs_of() {
  if constexpr (requires { typename P::needs; })
    return typename P::needs{};
  else
    return Properties<>{};
}
template <class P> auto before_of() {
  if constexpr (requires { typename P::before; })
    return typename P::before{};
  else
    return Properties<>{};
}
template <class P> auto establishes_of() {
  if constexpr (requires { typename P::establishes; })
    return typename P::establishes{};
  else
    return Properties<>{};
}
template <class P> auto invalidates_of() {
  if constexpr (requires { typename P::invalidates; })
    return typename P::invalidates{};
  else
    return Properties<>{};
}
} // namespace detail

} // namespace snippets::passes
