// Device targets: gpu.peak_tflops, gpu.hbm_GBps, gpu.memory_visible_bytes, node.gpus_per_node and
// compute.gemm.wave_quantization.num_sms, from the facts `run` recorded about the device. A CPU has no
// datasheet peak: there the peak is the best GEMM rate measured and the memory bandwidth the best
// streaming rate, so that efficiencies are fractions of what the machine showed it can do.
#pragma once

#include "calibrate/fit/fit_state.h"

namespace trainsim::calibrate {

/// Fits the device targets that hold directives (run after memory_bound.launch_us, which the best
/// streaming rate needs).
void fit_device_targets(FitState& state);

}  // namespace trainsim::calibrate
