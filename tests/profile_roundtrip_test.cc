// A hardware profile read and written back loses nothing: for every shipped profile, the document
// profile_to_json writes equals the file (as JSON values, key order aside), and reading it again gives the
// same struct. trainsim-calibrate writes its profiles this way, so the schema lives in one place.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/cost/hardware_profile.h"
#include "sim/cost/profile_reader.h"
#include "sim/cost/profile_writer.h"
#include "tests/test_support.h"

namespace trainsim {
namespace {

TEST(ProfileRoundTrip, EveryShippedProfileIsWrittenBackAsRead) {
    int profiles = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(testing::source_path("scenarios/hardware"))) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        const std::string name = entry.path().stem().string();
        std::ifstream in(entry.path());
        std::stringstream text;
        text << in.rdbuf();
        const Json file = parse_strict_json(text.str(), name);
        const cost::HardwareProfile profile = cost::profile_from_json(name, file);
        const Json written = cost::profile_to_json(profile);
        // Unordered comparison: every key and value of the file, and nothing else; 312 equals 312.0.
        EXPECT_EQ(nlohmann::json(written), nlohmann::json(file)) << name;
        EXPECT_EQ(cost::profile_from_json(name, parse_strict_json(written.dump(), name)), profile) << name;
        // The comparison sees a lost word: drop the description and it differs.
        Json without = written;
        without.erase("description");
        EXPECT_NE(nlohmann::json(without), nlohmann::json(file)) << name;
        ++profiles;
    }
    EXPECT_GE(profiles, 5);
}

TEST(ProfileRoundTrip, AChangedValueIsWrittenWithItsProvenance) {
    cost::HardwareProfile profile =
        cost::load_hardware_profile("a100-80gb-selene", testing::source_path("scenarios/hardware"));
    profile.hbm_GBps = 1234.5;
    profile.provenance.values["gpu.hbm_GBps"] = {"measured", "S-AZURE: a test"};
    const Json written = cost::profile_to_json(profile);
    EXPECT_EQ(written["gpu"]["hbm_GBps"]["value"], 1234.5);
    EXPECT_EQ(written["gpu"]["hbm_GBps"]["kind"], "measured");
    EXPECT_EQ(cost::profile_from_json("a100-80gb-selene", written).hbm_GBps, 1234.5);
}

}  // namespace
}  // namespace trainsim
