// `--trace FILE.pftrace`: parsed back with the generated classes, the protobuf trace holds the same
// tracks, slices, names and timestamps as the JSON trace of the same run, its names interned as Perfetto
// reads them (each defined once, before its first use). Built only with protobuf.
#ifdef TRAINSIM_WITH_PROTOBUF
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>

#include "perfetto_trace.pb.h"
#include "tests/support/json_file.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

TEST(Pftrace, SameTracksSlicesAndTimesAsTheJsonTrace) {
    // Half of 175B's layers: the same tracks at half the events, still over ten slices per interned name
    // (names carry the layer and the micro-batch, so fewer layers or micro-batches would not show that).
    const std::string run =
        "run " + testing::source_path("scenarios/korthikanti-175b.json") +
        " --set model.num_layers=48 --set training.global_batch_size=16 --critical-path --trace ";
    const std::string json_path = ::testing::TempDir() + "pftrace_same.json";
    const std::string proto_path = ::testing::TempDir() + "pftrace_same.pftrace";
    ASSERT_EQ(testing::run_trainsim(run + json_path).status, 0);
    const auto r = testing::run_trainsim(run + proto_path);
    ASSERT_EQ(r.status, 0) << r.err;

    const nlohmann::json json = testing::read_json_file(json_path);
    std::ifstream proto_in(proto_path, std::ios::binary);
    perfetto::protos::Trace trace;
    ASSERT_TRUE(trace.ParseFromIstream(&proto_in));

    std::size_t processes = 0;
    std::size_t threads = 0;
    std::size_t counters = 0;
    std::size_t begins = 0;
    std::size_t ends = 0;
    std::size_t counts = 0;
    using Slice = std::tuple<std::int64_t, std::int64_t, std::string>;  // (start, end) ns, name
    std::multiset<Slice> proto_slices;
    std::map<std::uint64_t, std::pair<std::int64_t, std::string>> open;
    std::map<std::uint64_t, std::string> names;
    std::set<std::uint64_t> categories;
    ASSERT_GT(trace.packet_size(), 0);
    EXPECT_EQ(trace.packet(0).sequence_flags(),
              std::uint32_t{perfetto::protos::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED});
    for (const auto& p : trace.packet()) {
        EXPECT_EQ(p.trusted_packet_sequence_id(), 1U);
        for (const auto& n : p.interned_data().event_names()) {
            EXPECT_TRUE(names.emplace(n.iid(), n.name()).second)
                << "name iid " << n.iid() << " defined twice";
        }
        for (const auto& c : p.interned_data().event_categories()) {
            EXPECT_TRUE(categories.insert(c.iid()).second) << "category iid " << c.iid() << " defined twice";
        }
        if (p.has_track_descriptor()) {
            const auto& d = p.track_descriptor();
            processes += d.has_process() ? 1 : 0;
            threads += d.has_thread() ? 1 : 0;
            counters += d.has_counter() ? 1 : 0;
            continue;
        }
        ASSERT_TRUE(p.has_track_event());
        const auto& e = p.track_event();
        const auto ts = static_cast<std::int64_t>(p.timestamp());
        switch (e.type()) {
        case perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN:
            ++begins;
            EXPECT_NE(p.sequence_flags() & perfetto::protos::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE, 0U);
            ASSERT_EQ(names.count(e.name_iid()), 1U) << "name iid " << e.name_iid() << " used before defined";
            ASSERT_EQ(e.category_iids_size(), 1);
            EXPECT_EQ(categories.count(e.category_iids(0)), 1U);
            open[e.track_uuid()] = {ts, names[e.name_iid()]};
            break;
        case perfetto::protos::TrackEvent::TYPE_SLICE_END:
            ++ends;
            ASSERT_EQ(open.count(e.track_uuid()), 1U);
            proto_slices.insert({open[e.track_uuid()].first, ts, open[e.track_uuid()].second});
            open.erase(e.track_uuid());
            break;
        case perfetto::protos::TrackEvent::TYPE_COUNTER:
            ++counts;
            break;
        default:
            ADD_FAILURE() << "unexpected event type " << e.type();
        }
    }
    std::size_t json_processes = 0;
    std::size_t json_threads = 0;
    std::size_t json_counts = 0;
    std::multiset<Slice> json_slices;
    for (const auto& e : json["traceEvents"]) {
        if (e["ph"] == "M" && e["name"] == "process_name") {
            ++json_processes;
        } else if (e["ph"] == "M" && e["name"] == "thread_name") {
            ++json_threads;
        } else if (e["ph"] == "C") {
            ++json_counts;
        } else if (e["ph"] == "X") {
            const double ts = e["ts"].get<double>() * 1e3;
            const double dur = e["dur"].get<double>() * 1e3;
            json_slices.insert({std::llround(ts), std::llround(ts + dur), e["name"].get<std::string>()});
        }
    }
    // The JSON's critical path track is a process with one unnamed thread (tid 0).
    EXPECT_EQ(processes, json_processes);
    EXPECT_EQ(threads, json_threads + 1);
    EXPECT_EQ(counters, json_processes - 1);
    EXPECT_EQ(counts, json_counts);
    EXPECT_GT(begins, 1000U);
    EXPECT_EQ(begins, ends);
    EXPECT_EQ(begins, json_slices.size());
    EXPECT_EQ(proto_slices, json_slices);
    // Interning is what keeps the file small: far fewer distinct names than slices.
    EXPECT_LT(names.size() * 10, begins);
}

}  // namespace
}  // namespace trainsim
#endif
