// `--trace FILE.pftrace`: parsed back with the generated classes, the protobuf trace holds the same
// tracks, slices and timestamps as the JSON trace of the same run. Built only with protobuf.
#ifdef TRAINSIM_WITH_PROTOBUF
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "perfetto_trace.pb.h"
#include "tests/support/json_file.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

TEST(Pftrace, SameTracksSlicesAndTimesAsTheJsonTrace) {
    const std::string run = "run " + testing::source_path("scenarios/korthikanti-175b.json") +
                            " --set training.global_batch_size=16 --critical-path --trace ";
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
    std::multiset<std::pair<std::int64_t, std::int64_t>> proto_slices;  // (start, end) ns
    std::map<std::uint64_t, std::int64_t> open;
    for (const auto& p : trace.packet()) {
        EXPECT_EQ(p.trusted_packet_sequence_id(), 1U);
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
            open[e.track_uuid()] = ts;
            break;
        case perfetto::protos::TrackEvent::TYPE_SLICE_END:
            ++ends;
            ASSERT_EQ(open.count(e.track_uuid()), 1U);
            proto_slices.insert({open[e.track_uuid()], ts});
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
    std::multiset<std::pair<std::int64_t, std::int64_t>> json_slices;
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
            json_slices.insert({std::llround(ts), std::llround(ts + dur)});
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
}

}  // namespace
}  // namespace trainsim
#endif
