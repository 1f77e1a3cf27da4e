#include "calibrate/bench/cpu/cpu_gemm.h"

#include <chrono>
#include <vector>

#include <Eigen/Dense>
#include <benchmark/benchmark.h>

namespace trainsim::calibrate {

namespace {

class CpuGemm : public TimedOp {
public:
    explicit CpuGemm(const GemmCase& g) {
        for (std::int64_t b = 0; b < g.shape.batch; ++b) {
            a_.push_back(Eigen::MatrixXf::Random(g.shape.m, g.shape.k));
            b_.push_back(Eigen::MatrixXf::Random(g.shape.k, g.shape.n));
            c_.push_back(Eigen::MatrixXf::Zero(g.shape.m, g.shape.n));
        }
    }

    double seconds_per_call(int calls) override {
        const auto start = std::chrono::steady_clock::now();
        for (int call = 0; call < calls; ++call) {
            for (std::size_t i = 0; i < c_.size(); ++i) {
                c_[i].noalias() = a_[i] * b_[i];
            }
        }
        const auto stop = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(c_.front().data());
        return std::chrono::duration<double>(stop - start).count() / calls;
    }

private:
    std::vector<Eigen::MatrixXf> a_, b_, c_;
};

}  // namespace

std::unique_ptr<TimedOp> make_cpu_gemm(const GemmCase& gemm) {
    return std::make_unique<CpuGemm>(gemm);
}

}  // namespace trainsim::calibrate
