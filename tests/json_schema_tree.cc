#include "tests/json_schema_tree.h"

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "tests/test_support.h"

namespace trainsim::testing {

namespace {

std::string child(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}

}  // namespace

const JsonSchemaTree& JsonSchemaTree::shipped(const std::string& file) {
    static std::map<std::string, JsonSchemaTree> read;
    if (const auto it = read.find(file); it != read.end()) {
        return it->second;
    }
    const std::string path = "schemas/" + file;
    std::ifstream in(source_path(path));
    if (!in) {
        throw std::runtime_error("cannot open " + path);
    }
    std::stringstream text;
    text << in.rdbuf();
    return read.emplace(file, JsonSchemaTree(parse_strict_json(text.str(), path))).first->second;
}

const Json& JsonSchemaTree::resolve(const Json& node) const {
    const Json* at = &node;
    // A chain of references ends within as many steps as there are definitions.
    for (std::size_t steps = 0; at->is_object() && at->contains("$ref"); ++steps) {
        const std::string ref = at->at("$ref").get<std::string>();
        constexpr std::string_view kPrefix = "#/$defs/";
        if (!ref.starts_with(kPrefix) || steps > schema_.at("$defs").size()) {
            throw std::out_of_range("unsupported or cyclic $ref " + ref);
        }
        at = &schema_.at("$defs").at(ref.substr(kPrefix.size()));
    }
    return *at;
}

const Json& JsonSchemaTree::object_at(std::string_view path) const {
    const Json* node = &resolve(schema_);
    std::size_t begin = 0;
    while (begin < path.size()) {
        const std::size_t dot = std::min(path.find('.', begin), path.size());
        node = &resolve(node->at("properties").at(std::string(path.substr(begin, dot - begin))));
        begin = dot + 1;
    }
    return *node;
}

std::vector<std::string> JsonSchemaTree::property_names(std::string_view path) const {
    std::vector<std::string> names;
    for (const auto& [key, value] : object_at(path).at("properties").items()) {
        names.push_back(key);
    }
    return names;
}

void JsonSchemaTree::collect(const Json& node, const std::string& path, std::set<std::string>& out,
                             int depth) const {
    if (depth > 32) {
        throw std::out_of_range("schema nested deeper than 32 levels at " + path);
    }
    const Json& n = resolve(node);
    if (!n.is_object()) {
        return;
    }
    if (n.contains("properties")) {
        for (const auto& [key, sub] : n.at("properties").items()) {
            out.insert(child(path, key));
            collect(sub, child(path, key), out, depth + 1);
        }
    }
    if (n.contains("additionalProperties") && n.at("additionalProperties").is_object()) {
        out.insert(child(path, "*"));
        collect(n.at("additionalProperties"), child(path, "*"), out, depth + 1);
    }
    if (n.contains("items")) {
        out.insert(path + "[]");
        collect(n.at("items"), path + "[]", out, depth + 1);
    }
}

std::set<std::string> JsonSchemaTree::property_paths() const {
    std::set<std::string> out;
    collect(schema_, "", out, 0);
    return out;
}

void JsonSchemaTree::walk(const Json& node, const Json& value, const std::string& schema_path,
                          const std::string& path, std::set<std::string>& out,
                          std::vector<std::string>& unknown) const {
    const Json& n = resolve(node);
    if (value.is_object()) {
        for (const auto& [key, sub] : value.items()) {
            if (n.contains("properties") && n.at("properties").contains(key)) {
                out.insert(child(schema_path, key));
                walk(n.at("properties").at(key), sub, child(schema_path, key), child(path, key), out,
                     unknown);
            } else if (n.contains("additionalProperties") && n.at("additionalProperties").is_object()) {
                out.insert(child(schema_path, "*"));
                walk(n.at("additionalProperties"), sub, child(schema_path, "*"), child(path, key), out,
                     unknown);
            } else {
                unknown.push_back(child(path, key));
            }
        }
    } else if (value.is_array() && n.contains("items")) {
        for (std::size_t i = 0; i < value.size(); ++i) {
            out.insert(schema_path + "[]");
            walk(n.at("items"), value[i], schema_path + "[]", path + "[" + std::to_string(i) + "]", out,
                 unknown);
        }
    }
}

std::set<std::string> JsonSchemaTree::document_paths(const Json& document,
                                                     std::vector<std::string>& unknown) const {
    std::set<std::string> out;
    walk(schema_, document, "", "", out, unknown);
    return out;
}

}  // namespace trainsim::testing
