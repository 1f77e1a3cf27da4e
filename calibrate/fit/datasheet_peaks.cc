#include "calibrate/fit/datasheet_peaks.h"

#include <array>

namespace trainsim::calibrate {

namespace {

struct Entry {
    const char* name;  // a substring of the name CUDA reports
    double tflops;
    const char* what;
};

// First match wins: the more specific names first (GH200 before H200, H100 PCIe before H100).
constexpr std::array<Entry, 8> kPeaks = {{
    {"GH200", 989.5, "GH200: BF16 1979 TFLOPS with sparsity / 2"},
    {"H200", 989.5, "H200: BF16 1979 TFLOPS with sparsity / 2"},
    {"H100 PCIe", 756.5, "H100 PCIe: BF16 1513 TFLOPS with sparsity / 2"},
    {"H100 NVL", 835.5, "H100 NVL: BF16 1671 TFLOPS with sparsity / 2"},
    {"H100 80GB HBM3", 989.5, "H100 SXM: BF16 1979 TFLOPS with sparsity / 2"},
    {"H100 SXM", 989.5, "H100 SXM: BF16 1979 TFLOPS with sparsity / 2"},
    {"A100", 312.0, "A100: BF16 312 TFLOPS dense"},
    {"L40S", 366.5, "L40S: BF16 733 TFLOPS with sparsity / 2"},
}};

}  // namespace

std::optional<DatasheetPeak> datasheet_peak(const std::string& device_name) {
    for (const Entry& e : kPeaks) {
        if (device_name.find(e.name) != std::string::npos) {
            return DatasheetPeak{e.tflops, e.what};
        }
    }
    return std::nullopt;
}

}  // namespace trainsim::calibrate
