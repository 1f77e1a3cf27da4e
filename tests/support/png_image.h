// A PNG reader for the tests that look at what a browser drew (tests/html_screenshot_test.cc): 8-bit RGB
// or RGBA, not interlaced, the kinds Chromium's --screenshot writes. Enough to count pixels, nothing more.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::testing {

struct PngImage {
    int width = 0;
    int height = 0;
    std::vector<std::array<std::uint8_t, 3>> rgb;  // row-major; alpha, if any, dropped

    [[nodiscard]] const std::array<std::uint8_t, 3>& at(int x, int y) const {
        return rgb[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                   static_cast<std::size_t>(x)];
    }
};

/// Reads `path`; throws std::runtime_error naming what it cannot read (not a PNG, a colour type or bit
/// depth other than 8-bit RGB/RGBA, interlacing, a corrupt stream).
[[nodiscard]] PngImage read_png(const std::string& path);

}  // namespace trainsim::testing
