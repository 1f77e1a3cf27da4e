#include "calibrate/measure/measurement_schema.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "calibrate/measure/measurement_schema_text.h"

namespace trainsim::calibrate {

const OrderedJson& measurement_schema() {
    static const OrderedJson schema = OrderedJson::parse(kMeasurementSchemaText);
    return schema;
}

const SchemaKeys& measurement_schema_keys(const std::string& definition) {
    static const std::map<std::string, SchemaKeys> all = [] {
        std::map<std::string, SchemaKeys> m;
        const OrderedJson& schema = measurement_schema();
        const auto keys_of = [](const OrderedJson& object) {
            SchemaKeys k;
            k.required = object.at("required").get<std::vector<std::string>>();
            for (const auto& [key, value] : object.at("properties").items()) {
                if (std::find(k.required.begin(), k.required.end(), key) == k.required.end()) {
                    k.optional.push_back(key);
                }
            }
            return k;
        };
        m[""] = keys_of(schema);
        for (const auto& [name, def] : schema.at("$defs").items()) {
            if (def.contains("properties")) {
                m[name] = keys_of(def);
            }
        }
        return m;
    }();
    const auto it = all.find(definition);
    if (it == all.end()) {
        throw std::logic_error("measurement schema has no object '" + definition + "'");
    }
    return it->second;
}

}  // namespace trainsim::calibrate
