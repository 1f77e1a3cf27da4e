// trainsim run --report, drawn by a headless browser (Debian's chromium-headless-shell, which
// scripts/install_packages.sh installs): the screenshot shows the charts, every bar the page draws on
// screen in its colour at its width, and the same page with its charts hidden fails that check.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/png_image.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

using Rgb = std::array<std::uint8_t, 3>;

struct Bar {
    Rgb colour;
    double width;
};

Rgb parse_colour(const std::string& hex) {
    return {static_cast<std::uint8_t>(std::stoi(hex.substr(1, 2), nullptr, 16)),
            static_cast<std::uint8_t>(std::stoi(hex.substr(3, 2), nullptr, 16)),
            static_cast<std::uint8_t>(std::stoi(hex.substr(5, 2), nullptr, 16))};
}

// The stacked bars of the page's charts (html_report.cc draws each as a 14-pixel-high rect), wide enough
// that a missing one could not hide in anti-aliasing.
std::vector<Bar> bars_of(const std::string& page) {
    static const std::regex rect(
        R"re(<rect x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)" height="14" fill="(#[0-9A-Fa-f]{6})")re");
    std::vector<Bar> bars;
    for (auto it = std::sregex_iterator(page.begin(), page.end(), rect); it != std::sregex_iterator(); ++it) {
        const double width = std::stod((*it)[1].str());
        if (width >= 20.0) {
            bars.push_back({parse_colour((*it)[2].str()), width});
        }
    }
    return bars;
}

// Every maximal horizontal run of one exact colour in the image, by colour: the lengths in pixels.
std::map<Rgb, std::vector<int>> runs_of(const testing::PngImage& image) {
    std::map<Rgb, std::vector<int>> runs;
    for (int y = 0; y < image.height; ++y) {
        int start = 0;
        for (int x = 1; x <= image.width; ++x) {
            if (x == image.width || image.at(x, y) != image.at(start, y)) {
                runs[image.at(start, y)].push_back(x - start);
                start = x;
            }
        }
    }
    return runs;
}

// How many of `bars` the screenshot shows: a run of the bar's colour as long as the bar, within the pixel
// the browser may round either way at each end.
std::size_t bars_shown(const std::vector<Bar>& bars, const std::map<Rgb, std::vector<int>>& runs) {
    std::size_t shown = 0;
    for (const Bar& bar : bars) {
        const auto it = runs.find(bar.colour);
        if (it == runs.end()) {
            continue;
        }
        for (const int length : it->second) {
            if (std::abs(length - bar.width) <= 2.0) {
                ++shown;
                break;
            }
        }
    }
    return shown;
}

testing::PngImage screenshot(const std::string& html, const std::string& png) {
    // One device pixel per CSS pixel, so the SVG's widths are the screenshot's; no sandbox, as CI runs
    // as root; `timeout` so that a browser that hangs fails the test instead of stalling the suite.
    const std::string command = std::string("timeout 120 ") + TRAINSIM_CHROMIUM +
                                " --headless --no-sandbox --disable-gpu --hide-scrollbars"
                                " --force-device-scale-factor=1 --window-size=900,1300 --screenshot=" +
                                png + " file://" + html + " > /dev/null 2>&1";
    std::remove(png.c_str());
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return testing::read_png(png);
}

TEST(HtmlScreenshot, TheBrowserDrawsEveryChartBarAtItsWidth) {
#ifndef TRAINSIM_CHROMIUM
    GTEST_SKIP() << "no chromium-headless-shell or chromium was found when CMake configured the tests";
#else
    const std::string dir = ::testing::TempDir();
    const std::string html = dir + "screenshot_report.html";
    const auto r =
        testing::run_trainsim("run " + testing::source_path("scenarios/korthikanti-22b.json") +
                              " --set model.num_layers=8 --set parallelism.pipeline_model_parallel_size=2"
                              " --set training.global_batch_size=8 --report " +
                              html);
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(html);
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<Bar> bars = bars_of(page);
    // Two stages' time and memory bars and the critical path's: at least compute and weights per stage,
    // activations, and the critical path's compute.
    ASSERT_GE(bars.size(), 6U);

    const testing::PngImage shown = screenshot(html, dir + "screenshot_report.png");
    ASSERT_EQ(shown.width, 900);
    ASSERT_GE(shown.height, 1300);
    EXPECT_EQ(bars_shown(bars, runs_of(shown)), bars.size());

    // The check can fail: the same page with its charts hidden shows none of the bars.
    std::string hidden = page;
    for (std::size_t at = 0; (at = hidden.find("<svg ", at)) != std::string::npos; at += 5) {
        hidden.insert(at + 5, "style=\"visibility:hidden\" ");
    }
    const std::string hidden_html = dir + "screenshot_hidden.html";
    std::ofstream(hidden_html) << hidden;
    EXPECT_EQ(bars_shown(bars, runs_of(screenshot(hidden_html, dir + "screenshot_hidden.png"))), 0U);
#endif
}

}  // namespace
}  // namespace trainsim
