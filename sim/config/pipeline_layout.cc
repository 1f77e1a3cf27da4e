#include "sim/config/pipeline_layout.h"

#include <algorithm>
#include <cctype>

#include "sim/core/input_error.h"

namespace trainsim::config {

namespace {

constexpr const char* kKey = "parallelism.pipeline_model_parallel_layout";
// More layers than any model has: a bigger unrolled layout is a typo (and would take the memory).
constexpr std::size_t kMaxUnrolled = std::size_t{1} << 20;

// `rule` starts with "=value ..." or with a space.
[[noreturn]] void fail_layout(const std::string& rule) {
    throw InputError(std::string(kKey) + rule);
}

// The repeat count after `*` at `at` (digits, as Megatron's `\d+`); npos when there is none.
std::size_t repeat_count(const std::string& s, std::size_t at, std::size_t& end) {
    end = at;
    std::size_t n = 0;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])) != 0) {
        n = std::min(n * 10 + static_cast<std::size_t>(s[end] - '0'), kMaxUnrolled + 1);
        ++end;
    }
    return end == at ? std::string::npos : n;
}

std::string repeated(const std::string& unit, std::size_t n, std::size_t already) {
    if (!unit.empty() && (n > kMaxUnrolled || already + unit.size() * n > kMaxUnrolled)) {
        fail_layout(" unrolls to more than " + std::to_string(kMaxUnrolled) + " symbols");
    }
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        out += unit;
    }
    return out;
}

// Megatron's parse_str_to_list: drop commas, unroll `(group)*n` left to right (re.sub of
// `\(([^)]+)\)\*(\d+)`), then `x*n` (re.sub of `(.)\*(\d+)`), then split on `|`.
std::string unroll(const std::string& text) {
    std::string s;
    std::copy_if(text.begin(), text.end(), std::back_inserter(s), [](char c) { return c != ','; });
    std::string groups;
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t close = s[i] == '(' ? s.find(')', i + 1) : std::string::npos;
        std::size_t end = 0;
        if (close != std::string::npos && close > i + 1 && close + 1 < s.size() && s[close + 1] == '*') {
            const std::size_t n = repeat_count(s, close + 2, end);
            if (n != std::string::npos) {
                const std::string unit = s.substr(i + 1, close - i - 1);
                if (unit.find('(') != std::string::npos) {
                    fail_layout("=\"" + text +
                                "\" nests parentheses, which Megatron's layout grammar does not unroll");
                }
                groups += repeated(unit, n, groups.size());
                i = end;
                continue;
            }
        }
        groups += s[i++];
    }
    std::string out;
    for (std::size_t i = 0; i < groups.size();) {
        std::size_t end = 0;
        if (i + 1 < groups.size() && groups[i + 1] == '*') {
            const std::size_t n = repeat_count(groups, i + 2, end);
            if (n != std::string::npos) {
                out += repeated(std::string(1, groups[i]), n, out.size());
                i = end;
                continue;
            }
        }
        out += groups[i++];
    }
    return out;
}

PipelineLayout parse_string(const std::string& text) {
    PipelineLayout layout{text, {{}}};
    const std::string flat = unroll(text);
    for (const char c : flat) {
        if (c == '|') {
            layout.stages.emplace_back();
            continue;
        }
        if (c != 'E' && c != 't' && c != 'm' && c != 'L') {
            fail_layout(
                "=\"" + text + "\": unknown symbol '" + std::string(1, c) + "' in stage " +
                std::to_string(layout.stages.size() - 1) +
                " (Megatron's symbols: E embedding, t transformer layer, m MTP layer, L loss, | between "
                "stages, (...)*n and x*n to repeat)");
        }
        layout.stages.back().push_back(static_cast<LayoutSymbol>(c));
    }
    return layout;
}

// Megatron's list form: LayerType names, stripped and lower-cased.
PipelineLayout parse_list(const Json& value) {
    PipelineLayout layout{value.dump(), {}};
    if (value.empty()) {
        fail_layout(" is an empty list (one list of layer names per virtual pipeline stage)");
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
        const Json& stage = value[i];
        const std::string at = std::string(kKey) + "[" + std::to_string(i) + "]";
        if (!stage.is_array()) {
            throw InputError(at + ": expected a list of layer names, got " + describe_json(stage));
        }
        layout.stages.emplace_back();
        for (std::size_t j = 0; j < stage.size(); ++j) {
            const std::string where = at + "[" + std::to_string(j) + "]";
            if (!stage[j].is_string()) {
                throw InputError(where + ": expected a layer name, got " + describe_json(stage[j]));
            }
            std::string name = stage[j].get<std::string>();
            const auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
            name.erase(name.begin(), std::find_if_not(name.begin(), name.end(), blank));
            name.erase(std::find_if_not(name.rbegin(), name.rend(), blank).base(), name.end());
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            static constexpr std::pair<const char*, LayoutSymbol> kNames[] = {
                {"embedding", LayoutSymbol::Embedding},
                {"decoder", LayoutSymbol::Decoder},
                {"mtp", LayoutSymbol::Mtp},
                {"loss", LayoutSymbol::Loss}};
            const auto* found = std::find_if(std::begin(kNames), std::end(kNames),
                                             [&](const auto& n) { return name == n.first; });
            if (found == std::end(kNames)) {
                throw InputError(where + ": unknown layer " + describe_json(stage[j]) +
                                 (name == "encoder"
                                      ? " (Megatron's flexible layout does not support encoder "
                                        "layers)"
                                      : " (Megatron's LayerType names: embedding, decoder, mtp, "
                                        "loss)"));
            }
            layout.stages.back().push_back(found->second);
        }
    }
    return layout;
}

std::int64_t count(const std::vector<LayoutSymbol>& stage, LayoutSymbol symbol) {
    return std::count(stage.begin(), stage.end(), symbol);
}

std::string stage_name(std::size_t stage, std::int64_t p) {
    return "stage " + std::to_string(stage) + " (pipeline rank " +
           std::to_string(static_cast<std::int64_t>(stage) % p) + ", chunk " +
           std::to_string(static_cast<std::int64_t>(stage) / p) + ")";
}

}  // namespace

PipelineLayout parse_pipeline_layout(const Json& value) {
    if (value.is_string()) {
        return parse_string(value.get<std::string>());
    }
    if (value.is_array()) {
        return parse_list(value);
    }
    throw InputError(
        std::string(kKey) +
        ": expected a layout string such as \"Et|(tt|)*30mL\" or a list of lists of layer names, "
        "got " +
        describe_json(value));
}

std::int64_t layout_virtual_size(const PipelineLayout& layout, std::int64_t pipeline_size) {
    const auto stages = static_cast<std::int64_t>(layout.stages.size());
    if (stages % pipeline_size != 0) {
        fail_layout("=" + layout.text + " has " + std::to_string(stages) +
                    " stages, which must be a multiple of parallelism.pipeline_model_parallel_size=" +
                    std::to_string(pipeline_size) + " (one per pipeline rank and virtual stage; Megatron)");
    }
    return stages / pipeline_size;
}

std::vector<std::int64_t> layout_layers_per_virtual_stage(const PipelineLayout& layout, std::int64_t p,
                                                          std::int64_t num_layers,
                                                          std::int64_t mtp_num_layers) {
    const std::int64_t v = layout_virtual_size(layout, p);
    const std::string shown = "=" + layout.text;
    std::vector<LayoutSymbol> flat;
    for (const auto& stage : layout.stages) {
        flat.insert(flat.end(), stage.begin(), stage.end());
    }
    const std::int64_t embeddings = count(flat, LayoutSymbol::Embedding);
    const std::int64_t losses = count(flat, LayoutSymbol::Loss);
    if (flat.empty() || flat.front() != LayoutSymbol::Embedding || embeddings != 1) {
        fail_layout(shown + " must start with the embedding E and name it once (Megatron), got " +
                    std::to_string(embeddings));
    }
    if (flat.back() != LayoutSymbol::Loss || losses != 1) {
        fail_layout(shown + " must end with the loss L and name it once (Megatron), got " +
                    std::to_string(losses));
    }
    // Megatron builds the embedding on the first stage and the loss on the last whatever the layout says
    // (pre_process / post_process), so empty stages before E or after L would misplace them.
    if (layout.stages.front().empty() || layout.stages.front().front() != LayoutSymbol::Embedding) {
        fail_layout(shown + " must put the embedding E in its first stage (pipeline rank 0, chunk 0), where "
                            "Megatron builds it");
    }
    if (layout.stages.back().empty()) {
        fail_layout(shown + " must put the loss L in its last stage (pipeline rank " + std::to_string(p - 1) +
                    ", chunk " + std::to_string(v - 1) + "), where Megatron builds it");
    }
    const std::int64_t decoders = count(flat, LayoutSymbol::Decoder);
    if (decoders != num_layers) {
        fail_layout(shown + " has " + std::to_string(decoders) +
                    " transformer layers (t), but model.num_layers=" + std::to_string(num_layers));
    }
    const std::int64_t mtps = count(flat, LayoutSymbol::Mtp);
    if (mtps != mtp_num_layers) {
        fail_layout(shown + " has " + std::to_string(mtps) +
                    " MTP layers (m), but model.mtp_num_layers=" + std::to_string(mtp_num_layers));
    }
    const auto first_mtp = std::find(flat.begin(), flat.end(), LayoutSymbol::Mtp);
    if (std::find(first_mtp, flat.end(), LayoutSymbol::Decoder) != flat.end()) {
        fail_layout(shown +
                    " places a transformer layer (t) after an MTP layer (m); Megatron needs every t first");
    }
    std::vector<std::int64_t> layers;
    for (std::size_t i = 0; i < layout.stages.size(); ++i) {
        const std::vector<LayoutSymbol>& stage = layout.stages[i];
        const std::int64_t here = count(stage, LayoutSymbol::Mtp);
        const auto rank = static_cast<std::int64_t>(i) % p;
        const auto chunk = static_cast<std::int64_t>(i) / p;
        if (here > 0 && (chunk != v - 1 || rank == 0)) {
            fail_layout(shown + " places MTP layers in " + stage_name(i, p) +
                        "; Megatron needs them in the last chunk of a pipeline rank other than 0");
        }
        if (here > 0 && here != mtp_num_layers) {
            fail_layout(shown + " splits the MTP layers over stages; Megatron needs all in one");
        }
        if (here > 0 && i + 1 != layout.stages.size()) {
            fail_layout(
                shown + " places the MTP layers in " + stage_name(i, p) +
                " apart from the loss (Megatron's mtp_standalone), which is not modelled: put m beside L");
        }
        layers.push_back(count(stage, LayoutSymbol::Decoder));
    }
    return layers;
}

}  // namespace trainsim::config
