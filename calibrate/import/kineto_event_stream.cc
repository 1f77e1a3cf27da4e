#include "calibrate/import/kineto_event_stream.h"

#include <istream>
#include <utility>
#include <vector>

#include "calibrate/import/kineto_trace.h"
#include "sim/core/input_error.h"

namespace trainsim::kineto {

namespace {

using Json = nlohmann::json;

// Builds one JSON value (a trace event, or a small top-level member) from SAX calls. Timestamps and
// durations keep their text: a fractional microsecond timestamp of 4.4e12 with three decimals does not
// survive a round trip through a double exactly.
class ValueBuilder {
public:
    void reset() {
        root_ = Json();
        stack_.clear();
        key_.clear();
    }
    [[nodiscard]] bool done() const { return stack_.empty(); }
    [[nodiscard]] Json& root() { return root_; }

    void value(Json v) { insert(std::move(v)); }
    void number_text(double v, const std::string& text) {
        if (stack_.size() == 1 && (key_ == "ts" || key_ == "dur")) {
            insert(Json(text));
        } else {
            insert(Json(v));
        }
    }
    void key(const std::string& k) { key_ = k; }
    void start(Json container) { stack_.push_back(insert(std::move(container))); }
    void end() { stack_.pop_back(); }

private:
    Json* insert(Json v) {
        if (stack_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        Json& top = *stack_.back();
        if (top.is_array()) {
            top.push_back(std::move(v));
            return &top.back();
        }
        Json& slot = top[key_];
        slot = std::move(v);
        return &slot;
    }

    Json root_;
    std::vector<Json*> stack_;
    std::string key_;
};
// SAX handler: depth 1 is the root object's members; traceEvents' elements (depth 2) are built one at a
// time and handed to the sink; other members are built whole (they are small) or skipped.
class TraceSax {
public:
    TraceSax(EventConsumer& sink, const std::string& path, const CompressedInput& input)
        : sink_(sink), path_(path), input_(input) {}

    [[nodiscard]] bool saw_events() const { return saw_events_; }

    bool null() { return scalar(Json(nullptr)); }
    bool boolean(bool v) { return scalar(Json(v)); }
    bool number_integer(std::int64_t v) { return scalar(Json(v)); }
    bool number_unsigned(std::uint64_t v) { return scalar(Json(v)); }
    bool number_float(double v, const std::string& s) {
        if (building_) {
            builder_.number_text(v, s);
            finish_value();
        }
        return true;
    }
    bool string(std::string& v) { return scalar(Json(v)); }
    bool binary(Json::binary_t& /*unused*/) { return true; }

    bool key(std::string& k) {
        if (depth_ == 1) {
            member_ = k;
        } else if (building_) {
            builder_.key(k);
        }
        return true;
    }
    bool start_object(std::size_t /*unused*/) { return open(Json::object()); }
    bool start_array(std::size_t /*unused*/) {
        if (depth_ == 1 && member_ == "traceEvents") {
            saw_events_ = true;
            in_events_ = true;
            ++depth_;
            return true;
        }
        return open(Json::array());
    }
    bool end_object() { return close(); }
    bool end_array() {
        if (in_events_ && depth_ == 2 && !building_) {
            in_events_ = false;
            --depth_;
            return true;
        }
        return close();
    }

    bool parse_error(std::size_t position, const std::string& last_token,
                     const nlohmann::detail::exception& error) {
        const std::string where = "at byte " + std::to_string(position);
        if (input_.exhausted() || std::string(error.what()).find("end of input") != std::string::npos) {
            throw InputError(path_ + ": the JSON ends early " + where + " (a truncated trace?)");
        }
        throw InputError(path_ + ": not valid JSON " + where + " (near '" + printable(last_token, 40) + "')");
    }

private:
    // Members the consumer reads whole; any other top-level member (and its subtree) is skipped.
    [[nodiscard]] bool wanted(const std::string& m) const { return sink_.wants_member(m); }

    bool scalar(Json v) {
        if (depth_ == 0) {
            throw InputError(path_ + ": not a PyTorch profiler trace (the JSON is not an object)");
        }
        if (building_) {
            builder_.value(std::move(v));
            finish_value();
        } else if (depth_ == 1 && wanted(member_)) {
            sink_.member(member_, v);
        }
        return true;
    }

    bool open(Json container) {
        if (depth_ == 0 && !container.is_object()) {
            throw InputError(path_ + ": not a PyTorch profiler trace (the JSON is not an object)");
        }
        const bool start_event = in_events_ && depth_ == 2;
        const bool start_member = depth_ == 1 && wanted(member_);
        ++depth_;
        if (building_) {
            builder_.start(std::move(container));
        } else if (start_event || start_member) {
            building_ = true;
            builder_.reset();
            builder_.start(std::move(container));
        }
        return true;
    }

    bool close() {
        --depth_;
        if (building_) {
            builder_.end();
            finish_value();
        }
        return true;
    }

    void finish_value() {
        if (!builder_.done()) {
            return;
        }
        building_ = false;
        if (in_events_) {
            sink_.event(builder_.root());
        } else {
            sink_.member(member_, builder_.root());
        }
    }

    EventConsumer& sink_;
    const std::string& path_;
    const CompressedInput& input_;
    ValueBuilder builder_;
    int depth_ = 0;
    std::string member_;
    bool in_events_ = false;
    bool saw_events_ = false;
    bool building_ = false;
};

}  // namespace

bool stream_trace_events(CompressedInput& input, const std::string& path, EventConsumer& consumer) {
    std::istream in(&input);
    TraceSax sax(consumer, path, input);
    Json::sax_parse(in, &sax, nlohmann::detail::input_format_t::json, true);
    return sax.saw_events();
}

}  // namespace trainsim::kineto
