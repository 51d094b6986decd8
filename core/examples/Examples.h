#pragma once
// Teaching examples: small models built in code, each showing one lecture topic on a real graph.
// The app lists them under File → Examples; resources/ writes them out as .onnx files.
#include <functional>
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::examples {

struct Example {
    std::string id;        ///< file stem: "conv_bn_relu"
    std::string title;     ///< menu text
    std::string topic;     ///< one sentence: what to look at
    std::function<ir::Model()> build;
};

/// All examples, the default one (opened when the app starts without a file) first.
const std::vector<Example>& all();
const Example* find(const std::string& id);

}  // namespace passlens::examples
