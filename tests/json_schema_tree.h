// The JSON Schemas of schemas/ read the way the drift tests need them: which keys an object of the schema
// allows, and which key paths a document uses. Follows "$ref" to "#/$defs/..." and the keywords that
// nest objects in trainsim's schemas (properties, items, additionalProperties); alternatives (anyOf,
// oneOf) only add rules on the same keys and are not walked.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/strict_json.h"

namespace trainsim::testing {

class JsonSchemaTree {
public:
    explicit JsonSchemaTree(Json schema) : schema_(std::move(schema)) {}

    /// The schema `file` of schemas/ (e.g. "scenario.schema.json"), read once.
    [[nodiscard]] static const JsonSchemaTree& shipped(const std::string& file);

    [[nodiscard]] const Json& schema() const { return schema_; }
    [[nodiscard]] Json& schema() { return schema_; }

    /// `node`, or what its "$ref" names (repeatedly).
    [[nodiscard]] const Json& resolve(const Json& node) const;

    /// The (resolved) schema of the object at the dotted property path `path`; "" is the root.
    /// Throws std::out_of_range when the schema has no such property.
    [[nodiscard]] const Json& object_at(std::string_view path) const;

    /// The property names of the object at `path`, in the schema's order.
    [[nodiscard]] std::vector<std::string> property_names(std::string_view path) const;

    /// Every key path the schema names: "a.b" for a property, "a[]" for the elements of an array, and
    /// "a.*" for the entries of a map (an object whose additionalProperties is a schema).
    [[nodiscard]] std::set<std::string> property_paths() const;

    /// The key paths `document` uses, spelled as property_paths() spells them. Each key the schema does
    /// not name goes to `unknown` as its path in the document ("compute.gemm.points[3].typo").
    [[nodiscard]] std::set<std::string> document_paths(const Json& document,
                                                       std::vector<std::string>& unknown) const;

private:
    void collect(const Json& node, const std::string& path, std::set<std::string>& out, int depth) const;
    void walk(const Json& node, const Json& value, const std::string& schema_path, const std::string& path,
              std::set<std::string>& out, std::vector<std::string>& unknown) const;

    Json schema_;
};

}  // namespace trainsim::testing
