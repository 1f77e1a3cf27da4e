#include "sim/pftrace/pftrace_writer.h"

#include <cstdint>
#include <string>
#include <unordered_map>

#include "perfetto_trace.pb.h"
#include "sim/memory/activation_timeline.h"
#include "sim/report/link_rate_tracks.h"

namespace trainsim::pftrace {
namespace {

// Track uuids: only need to be unique within the file.
constexpr std::uint64_t kProcess = 1;
constexpr std::uint64_t kThread = 1ULL << 32;
constexpr std::uint64_t kCounter = 2ULL << 32;
constexpr std::uint64_t kCritical = 3ULL << 32;
constexpr std::uint64_t kNetwork = 4ULL << 32;  // the network's process, then its links' counters
constexpr std::uint32_t kSequence = 1;

// A Trace is `repeated TracePacket packet = 1`, so appending (tag, length, bytes) per packet streams one
// without holding the whole trace in memory.
class PacketStream {
public:
    explicit PacketStream(std::ostream& out) : out_(out) {}

    void emit(perfetto::protos::TracePacket& packet) {
        packet.set_trusted_packet_sequence_id(kSequence);
        if (first_) {
            // The sequence's interned strings start empty here (Perfetto needs this before any iid).
            packet.set_sequence_flags(packet.sequence_flags() |
                                      perfetto::protos::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
            first_ = false;
        }
        packet.SerializeToString(&buffer_);
        out_.put(static_cast<char>((1 << 3) | 2));  // field 1, length-delimited
        for (std::uint64_t n = buffer_.size();; n >>= 7) {
            if (n < 0x80) {
                out_.put(static_cast<char>(n));
                break;
            }
            out_.put(static_cast<char>((n & 0x7f) | 0x80));
        }
        out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        packet.Clear();
    }

    void process(std::uint64_t uuid, int pid, const std::string& name) {
        auto* track = packet_.mutable_track_descriptor();
        track->set_uuid(uuid);
        track->mutable_process()->set_pid(pid);
        track->mutable_process()->set_process_name(name);
        emit(packet_);
    }

    void thread(std::uint64_t uuid, std::uint64_t parent, int pid, int tid, const std::string& name) {
        auto* track = packet_.mutable_track_descriptor();
        track->set_uuid(uuid);
        track->set_parent_uuid(parent);
        track->mutable_thread()->set_pid(pid);
        track->mutable_thread()->set_tid(tid);
        track->mutable_thread()->set_thread_name(name);
        emit(packet_);
    }

    void counter_track(std::uint64_t uuid, std::uint64_t parent, const std::string& name) {
        auto* track = packet_.mutable_track_descriptor();
        track->set_uuid(uuid);
        track->set_parent_uuid(parent);
        track->set_name(name);
        track->mutable_counter();
        emit(packet_);
    }

    void slice(std::uint64_t track, SimTime start, SimTime end, const std::string& name,
               const char* category) {
        packet_.set_timestamp(static_cast<std::uint64_t>(start.ns()));
        auto* event = packet_.mutable_track_event();
        event->set_type(perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN);
        event->set_track_uuid(track);
        event->set_name_iid(intern(names_, name, [&](std::uint64_t iid) {
            auto* entry = packet_.mutable_interned_data()->add_event_names();
            entry->set_iid(iid);
            entry->set_name(name);
        }));
        event->add_category_iids(intern(categories_, category, [&](std::uint64_t iid) {
            auto* entry = packet_.mutable_interned_data()->add_event_categories();
            entry->set_iid(iid);
            entry->set_name(category);
        }));
        packet_.set_sequence_flags(packet_.sequence_flags() |
                                   perfetto::protos::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
        emit(packet_);
        packet_.set_timestamp(static_cast<std::uint64_t>(end.ns()));
        event = packet_.mutable_track_event();
        event->set_type(perfetto::protos::TrackEvent::TYPE_SLICE_END);
        event->set_track_uuid(track);
        emit(packet_);
    }

    void count(std::uint64_t track, SimTime time, std::int64_t value) {
        packet_.set_timestamp(static_cast<std::uint64_t>(time.ns()));
        auto* event = packet_.mutable_track_event();
        event->set_type(perfetto::protos::TrackEvent::TYPE_COUNTER);
        event->set_track_uuid(track);
        event->set_counter_value(value);
        emit(packet_);
    }

private:
    // Perfetto's string interning: an op name or category is written once, in the packet that first uses
    // it, and every slice refers to it by id (ids start at 1). Op names repeat on every layer and
    // micro-batch, so this is most of a trace's size.
    template <typename Define>
    static std::uint64_t intern(std::unordered_map<std::string, std::uint64_t>& table,
                                const std::string& text, Define define) {
        const auto [it, added] = table.try_emplace(text, table.size() + 1);
        if (added) {
            define(it->second);
        }
        return it->second;
    }

    std::ostream& out_;
    std::string buffer_;
    perfetto::protos::TracePacket packet_;
    bool first_ = true;
    std::unordered_map<std::string, std::uint64_t> names_, categories_;
};

}  // namespace

void write_pftrace(std::ostream& out, const config::Scenario& scenario, const program::IterationProgram& prog,
                   const engine::RunResult& run, const report::TraceOptions& options) {
    auto kept = [&](std::size_t gpu) { return options.keeps(gpu); };
    auto in_window = [&](const engine::TaskTiming& t) { return options.overlaps(t); };
    PacketStream packets(out);
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        if (kept(g)) {
            packets.process(kProcess + g, static_cast<int>(g),
                            report::gpu_process_name(prog.gpus[g].coordinates));
        }
    }
    const auto& streams = prog.program.streams();
    for (std::size_t s = 0; s < streams.size(); ++s) {
        const std::size_t gpu = streams[s].gpu.index();
        if (kept(gpu)) {
            packets.thread(kThread + s, kProcess + gpu, static_cast<int>(gpu), static_cast<int>(s),
                           streams[s].name);
        }
    }
    for (std::size_t t = 0; t < prog.program.size(); ++t) {
        if (!in_window(run.timings[t]) || !kept(prog.info.gpu(t).index())) {
            continue;
        }
        const program::TaskInfo& info = prog.info[t];
        const auto id = engine::TaskId::from_index(t);
        const auto track = kThread + prog.program.stream(id).index();
        for (const program::OpSpan& span : program::op_spans(prog, id, run.timings[t])) {
            packets.slice(track, span.start, span.end, span.op != nullptr ? span.op->name : prog.describe(id),
                          program::to_string(info.category));
        }
    }
    if (options.critical_track) {
        packets.process(kCritical, static_cast<int>(prog.gpus.size()), "critical path");
        packets.thread(kCritical + 1, kCritical, static_cast<int>(prog.gpus.size()), 0, "critical path");
        for (const engine::TaskId id : options.critical) {
            const auto t = id.index();
            if (in_window(run.timings[t])) {
                packets.slice(kCritical + 1, run.timings[t].start, run.timings[t].end, prog.describe(id),
                              program::to_string(prog.info[t].category));
            }
        }
    }
    const std::vector<memory::ActivationTimeline> memory = memory::activation_timelines(prog, run);
    for (std::size_t g = 0; g < prog.gpus.size(); ++g) {
        if (!kept(g)) {
            continue;
        }
        packets.counter_track(kCounter + g, kProcess + g, "allocated bytes");
        for (const report::AllocatedBytesSample& sample :
             report::allocated_bytes_in_window(scenario, prog, g, memory[g], options)) {
            packets.count(kCounter + g, sample.time, sample.bytes);
        }
    }
    const std::vector<report::LinkRateTrack> links = report::link_rate_tracks(prog, run, options);
    if (!links.empty()) {
        packets.process(kNetwork, static_cast<int>(prog.gpus.size()) + 1, "network");
        for (std::size_t i = 0; i < links.size(); ++i) {
            packets.counter_track(kNetwork + 1 + i, kNetwork, links[i].name);
            for (const report::LinkRateSample& sample : links[i].samples) {
                packets.count(kNetwork + 1 + i, sample.time, sample.bytes_per_second);
            }
        }
    }
}

}  // namespace trainsim::pftrace
