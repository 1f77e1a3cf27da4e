// Where each number of a hardware profile came from, as the file states it: the sources table, each
// value's kind and source, curve and point provenance, free-text notes and modelling assumptions. The
// simulator prices nothing with it; it is kept so that a profile can be written back (profile_writer.h)
// exactly as read, and so that trainsim-calibrate writes profiles through the struct the simulator reads.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::cost {

struct Provenance {
    std::string kind;    // datasheet | measured | derived | sim_config | assumed
    std::string source;  // text citing ids of the sources table
    friend bool operator==(const Provenance&, const Provenance&) = default;
};

struct Assumption {
    std::string what;
    Provenance provenance;
    friend bool operator==(const Assumption&, const Assumption&) = default;
};

struct ProfileProvenance {
    std::vector<std::pair<std::string, std::string>> sources;  // id → citation, in file order
    /// By path: a value ("gpu.peak_tflops"), a curve's default ("compute.gemm.efficiency_vs_flops") or
    /// one point's own ("compute.gemm.efficiency_vs_flops.points[3]").
    std::map<std::string, Provenance> values;
    std::map<std::string, std::string> notes;  // path of an object ("" the root) → its note
    std::map<std::string, std::vector<Assumption>> assumptions;  // section path → its list
    /// Paths of numbers the file spells as integers ("value": 312, not 312.0): a whole number read into a
    /// double is written back the way it was written.
    std::set<std::string> integer_spelling;
    friend bool operator==(const ProfileProvenance&, const ProfileProvenance&) = default;
};

}  // namespace trainsim::cost
