// Dense 16-bit tensor-core peaks of data-centre GPUs from NVIDIA's datasheets, by the name CUDA reports:
// what `fit` takes as gpu.peak_tflops for a CUDA run when --peak-tflops is not given (the clock a device
// reports is not the datasheet's boost clock, so the peak cannot be computed from it).
#pragma once

#include <optional>
#include <string>

namespace trainsim::calibrate {

/// The source id the table's entries cite in a fitted profile, and its citation.
inline constexpr const char* kDatasheetSourceId = "S-NVIDIA-DATASHEETS";
inline constexpr const char* kDatasheetCitation =
    "NVIDIA datasheets: A100 Tensor Core GPU (BF16 312 TFLOPS dense), H100 Tensor Core GPU (SXM BF16 1979, "
    "PCIe "
    "1513, NVL 1671 TFLOPS with sparsity; dense is half), H200 Tensor Core GPU (BF16 1979 with sparsity), "
    "GH200 "
    "Grace Hopper Superchip (BF16 1979 with sparsity), L40S (BF16 733 with sparsity)";

struct DatasheetPeak {
    double tflops = 0.0;
    std::string what;  // e.g. "H100 SXM: 1979 TFLOPS BF16 with sparsity / 2"
};

/// The entry whose name the device name contains ("NVIDIA H100 80GB HBM3" is the SXM part), if any.
[[nodiscard]] std::optional<DatasheetPeak> datasheet_peak(const std::string& device_name);

}  // namespace trainsim::calibrate
