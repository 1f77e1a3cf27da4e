#include "calibrate/fit/source_renaming.h"

#include <algorithm>
#include <set>

namespace trainsim::calibrate {

namespace {

bool id_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

bool word_char(char c) {
    return id_char(c) || (c >= 'a' && c <= 'z') || c == '_';
}

void rename_in(Origin& o, const std::string& from, const std::string& to) {
    if (o.source_id == from) {
        o.source_id = to;
    }
    o.source = replace_source_id(o.source, from, to);
}

}  // namespace

std::string replace_source_id(const std::string& text, const std::string& from, const std::string& to) {
    std::string out;
    std::size_t at = 0;
    for (std::size_t hit = text.find(from); hit != std::string::npos; hit = text.find(from, hit + 1)) {
        const std::size_t end = hit + from.size();
        const bool whole = (hit == 0 || !word_char(text[hit - 1])) &&
                           (end == text.size() || !id_char(text[end]) ||
                            (text[end] == '-' && (end + 1 == text.size() || !id_char(text[end + 1]))));
        if (whole && hit >= at) {
            out += text.substr(at, hit - at) + to;
            at = end;
        }
    }
    return out + text.substr(at);
}

std::vector<std::string> rename_sources_taken_by(MeasurementSet& m, const OrderedJson& base_sources) {
    std::set<std::string> taken;
    for (const auto& [id, citation] : base_sources.items()) {
        taken.insert(id);
    }
    std::vector<std::pair<std::string, std::string>> own;  // every id the inputs define, with its citation
    for (const InputFile& f : m.files) {
        own.emplace_back(f.source_id, f.citation);
    }
    for (const auto& s : m.sources) {
        own.push_back(s);
    }
    for (const auto& [id, citation] : own) {
        taken.insert(id);
    }
    std::vector<std::string> renamed;
    for (const auto& [id, citation] : own) {
        if (!base_sources.contains(id) || base_sources.at(id) == citation) {
            continue;
        }
        std::string to;
        for (int i = 2; to.empty() || taken.count(to) > 0; ++i) {
            to = id + "-" + std::to_string(i);
        }
        taken.insert(to);
        for (InputFile& f : m.files) {
            f.source_id = f.source_id == id ? to : f.source_id;
        }
        for (auto& s : m.sources) {
            s.first = s.first == id ? to : s.first;
        }
        for (GemmMeasurement& g : m.gemms) {
            rename_in(g.origin, id, to);
        }
        for (KernelMeasurement& k : m.kernels) {
            rename_in(k.origin, id, to);
        }
        for (CollectiveMeasurement& c : m.collectives) {
            rename_in(c.origin, id, to);
        }
        if (m.device && m.device->source_id == id) {
            m.device->source_id = to;
        }
        renamed.push_back(id + " -> " + to);
    }
    return renamed;
}

}  // namespace trainsim::calibrate
