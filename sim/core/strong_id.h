// An integer id that only compares with ids of its own kind (issue 24): a stream id passed where a task
// id is expected no longer compiles. It holds the same integer as before, so it costs nothing: same
// size, same layout, same order, same hash.
#pragma once

#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>

namespace trainsim {

/// An id of the kind `Tag` (an empty struct that only names the kind). Ids are dense indices from 0;
/// a default-constructed id is none() (−1), the "no such id" every container of ids starts out with.
template <typename Tag, typename Rep = std::int32_t> class StrongId {
public:
    using rep_type = Rep;

    constexpr StrongId() = default;
    constexpr explicit StrongId(Rep value) : value_(value) {}
    // Only from Rep itself: a size_t or an int64 must say how it narrows (from_index, or a cast). Rep
    // picks the constructor above (a non-template beats a template on an exact match).
    template <std::integral T> StrongId(T) = delete;

    /// The id at position `index` of a dense range (a loop over a vector of every task, say).
    [[nodiscard]] static constexpr StrongId from_index(std::size_t index) {
        return StrongId{static_cast<Rep>(index)};
    }
    /// The "no such id" marker.
    [[nodiscard]] static constexpr StrongId none() { return StrongId{}; }

    [[nodiscard]] constexpr Rep value() const { return value_; }
    /// The position to index a vector with (only for an id that is not none()).
    [[nodiscard]] constexpr std::size_t index() const { return static_cast<std::size_t>(value_); }
    /// Whether it names something: not none() (nor any other negative value).
    [[nodiscard]] constexpr bool valid() const { return value_ >= 0; }

    friend constexpr bool operator==(StrongId, StrongId) = default;
    friend constexpr auto operator<=>(StrongId, StrongId) = default;
    friend std::ostream& operator<<(std::ostream& out, StrongId id) { return out << id.value_; }

private:
    Rep value_ = -1;
};

}  // namespace trainsim

template <typename Tag, typename Rep> struct std::hash<trainsim::StrongId<Tag, Rep>> {
    [[nodiscard]] std::size_t operator()(trainsim::StrongId<Tag, Rep> id) const noexcept {
        return std::hash<Rep>{}(id.value());
    }
};
