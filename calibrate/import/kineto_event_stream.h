// Streams trace-event JSON ({"traceEvents": [...], ...}) through nlohmann's SAX interface: each element of
// traceEvents is built as a small JSON value, handed to the consumer and dropped, so memory does not grow
// with the file; the top-level members the consumer asks for are built whole (they are small).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/import/kineto_compressed_input.h"

namespace trainsim::kineto {

class EventConsumer {
public:
    virtual ~EventConsumer() = default;
    /// One element of traceEvents. Its "ts" and "dur", when fractional, are the number's text (a
    /// double would lose the last digits of a 4.4e12 microsecond timestamp).
    virtual void event(const nlohmann::json& e) = 0;
    virtual void member(const std::string& key, const nlohmann::json& value) = 0;
    [[nodiscard]] virtual bool wants_member(const std::string& key) const = 0;
};

/// Parses the whole input; returns whether it had a traceEvents array. Throws InputError "PATH: RULE" for
/// input that is not a JSON object, not valid JSON, or ends early ("truncated").
bool stream_trace_events(CompressedInput& input, const std::string& path, EventConsumer& consumer);

}  // namespace trainsim::kineto
