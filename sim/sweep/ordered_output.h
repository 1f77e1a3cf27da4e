// Puts results that finish in any order back into item order: a result is passed on once every earlier
// item's result has been. The CSV of a sweep is then the same for any number of threads (and ranks),
// and a killed sweep leaves a prefix of the grid.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace trainsim::sweep {

class OrderedOutput {
public:
    /// `emit` receives each line in item order, under this object's lock (one caller at a time).
    explicit OrderedOutput(std::function<void(const std::string& line)> emit) : emit_(std::move(emit)) {}

    /// Records item `item`'s line; emits it and any that were waiting for it. Thread-safe.
    void put(std::size_t item, std::string line);

    /// Items emitted so far (all items before this index).
    [[nodiscard]] std::size_t emitted() const;

private:
    std::function<void(const std::string&)> emit_;
    mutable std::mutex mutex_;
    std::map<std::size_t, std::string> waiting_;
    std::size_t next_ = 0;
};

}  // namespace trainsim::sweep
