// The engine's ids are distinct types (issue 24): what used to compile silently (a stream id where a task
// id is expected, a size_t narrowed into an id) must not, and an id must cost what the int32 it replaced
// cost.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_set>

#include "sim/core/strong_id.h"
#include "sim/engine/program.h"
#include "sim/engine/resource_classes.h"

namespace trainsim::engine {
namespace {

// Mixing kinds does not compile.
static_assert(!std::is_convertible_v<StreamId, TaskId>);
static_assert(!std::is_constructible_v<TaskId, StreamId>);
static_assert(!std::is_constructible_v<RendezvousId, TaskId>);
static_assert(!std::is_invocable_v<std::equal_to<>, TaskId, StreamId>);
// A flow spec is its own kind too: not a rendezvous (which runs one), not an integer index.
static_assert(!std::is_constructible_v<FlowSpecId, RendezvousId>);
static_assert(!std::is_invocable_v<std::equal_to<>, FlowSpecId, RendezvousId>);
static_assert(!std::is_convertible_v<std::int32_t, FlowSpecId>);
static_assert(!std::is_convertible_v<FlowSpecId, std::int32_t>);
// A resource (a link the program shares) is not a class of them (ResourceClasses' index), not a flow
// spec, not an integer: the engine shares classes, and a class id indexing the resources, or a resource
// id the classes, no longer compiles.
static_assert(!std::is_convertible_v<std::int32_t, ResourceId>);
static_assert(!std::is_convertible_v<ResourceId, std::int32_t>);
static_assert(!std::is_constructible_v<ResourceId, ResourceClassId>);
static_assert(!std::is_constructible_v<ResourceClassId, ResourceId>);
static_assert(!std::is_invocable_v<std::equal_to<>, ResourceId, ResourceClassId>);
static_assert(!std::is_constructible_v<ResourceId, FlowSpecId>);
static_assert(!std::is_constructible_v<FlowSpecId, ResourceId>);
static_assert(!std::is_constructible_v<FlowUse, ResourceClassId, double>);
static_assert(!std::is_constructible_v<ResourceClassUse, ResourceId, double>);
static_assert(!std::is_convertible_v<std::span<const ResourceClassUse>, std::span<const FlowUse>>);
static_assert(
    !std::is_invocable_v<decltype(&ResourceClasses::class_of), const ResourceClasses&, ResourceClassId>);
static_assert(std::is_invocable_v<decltype(&ResourceClasses::class_of), const ResourceClasses&, ResourceId>);
// A simulated GPU is not a stream on it, a task, nor an integer (a pipeline stage or a rank stays one).
static_assert(!std::is_convertible_v<std::int32_t, GpuId>);
static_assert(!std::is_convertible_v<GpuId, std::int32_t>);
static_assert(!std::is_constructible_v<GpuId, std::size_t>);
static_assert(!std::is_constructible_v<GpuId, StreamId>);
static_assert(!std::is_constructible_v<StreamId, GpuId>);
static_assert(!std::is_constructible_v<GpuId, TaskId>);
static_assert(!std::is_constructible_v<TaskId, GpuId>);
static_assert(!std::is_invocable_v<std::equal_to<>, GpuId, StreamId>);
static_assert(!std::is_invocable_v<std::equal_to<>, GpuId, int>);
static_assert(!std::is_invocable_v<decltype(&Program::add_stream), Program&, std::int32_t, std::string>);
static_assert(std::is_invocable_v<decltype(&Program::add_stream), Program&, GpuId, std::string>);
// Nor does an integer pass for an id, or an id for an integer.
static_assert(!std::is_convertible_v<std::int32_t, TaskId>);
static_assert(!std::is_constructible_v<TaskId, std::size_t>);
static_assert(!std::is_constructible_v<TaskId, std::int64_t>);
static_assert(!std::is_convertible_v<TaskId, std::int32_t>);
static_assert(!std::is_invocable_v<std::less<>, TaskId, int>);
// Same size and layout as the int32 it replaced: a program's per-task arrays keep their footprint.
static_assert(sizeof(TaskId) == sizeof(std::int32_t) && std::is_trivially_copyable_v<TaskId>);

TEST(StrongId, DefaultIsNoneAndIndexesFromZero) {
    EXPECT_EQ(TaskId{}, kNoTask);
    EXPECT_EQ(kNoTask.value(), -1);
    EXPECT_FALSE(kNoStream.valid());
    EXPECT_TRUE(TaskId{0}.valid());
    EXPECT_EQ(TaskId::from_index(7), TaskId{7});
    EXPECT_EQ(TaskId{7}.index(), 7u);
}

TEST(StrongId, OrdersHashesAndPrintsAsItsInteger) {
    EXPECT_LT(TaskId{2}, TaskId{3});
    EXPECT_LT(kNoRendezvous, RendezvousId{0});
    EXPECT_EQ(std::hash<StreamId>{}(StreamId{42}), std::hash<std::int32_t>{}(42));
    const std::unordered_set<TaskId> ids{TaskId{1}, TaskId{2}, TaskId{1}};
    EXPECT_EQ(ids.size(), 2u);
    std::ostringstream out;
    out << TaskId{5} << ' ' << kNoStream;
    EXPECT_EQ(out.str(), "5 -1");
}

TEST(StrongId, ProgramHandsOutDenseIdsOfEachKind) {
    Program p;
    const StreamId s0 = p.add_stream(GpuId{0}, "a");
    const StreamId s1 = p.add_stream(GpuId{0}, "b");
    const RendezvousId r = p.add_rendezvous(1, 5_ns, "r");
    const TaskId t0 = p.add_task(s1, 3_ns, "t0");
    const TaskId t1 = p.add_rendezvous_task(s0, r, "t1", std::span(&t0, 1));
    EXPECT_EQ(s0, StreamId{0});
    EXPECT_EQ(s1, StreamId{1});
    EXPECT_EQ(r, RendezvousId{0});
    EXPECT_EQ(t1, TaskId{1});
    EXPECT_EQ(p.stream(t0), s1);
    EXPECT_EQ(p.rendezvous_of(t1), r);
    EXPECT_EQ(p.rendezvous_of(t0), kNoRendezvous);
    EXPECT_EQ(p.streams()[s0.index()].yields_to, kNoStream);
}

}  // namespace
}  // namespace trainsim::engine
