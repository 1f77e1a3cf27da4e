#include "sim/core/units.h"

#include <cstdio>
#include <string>

#include "sim/core/input_error.h"

namespace trainsim {

void throw_beyond_sim_time(Seconds s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", s.value);
    throw InputError(std::string("a cost of ") + text +
                     " s is beyond the 2^63 ns (292 years) simulated time can hold: the scenario's model and "
                     "batch sizes are too large for the hardware profile");
}

}  // namespace trainsim
