// `passlens-cli passes` lists exactly the registered passes, each with its level and description.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "passes/PassRegistry.h"
#include "TestSupport.h"

using namespace passlens;

TEST(PassesCli, JsonListsEveryRegisteredPassOnce) {
    auto r = test::runCli({"passes", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto arr = nlohmann::json::parse(r.out);
    const auto& reg = passes::PassRegistry::global();
    std::set<std::string> listed;
    for (const auto& p : arr) {
        auto name = p.at("name").get<std::string>();
        EXPECT_TRUE(listed.insert(name).second) << name << " listed twice";
        EXPECT_FALSE(p.at("description").get<std::string>().empty()) << name;
        auto level = p.at("level").get<std::string>();
        EXPECT_TRUE(level == "named" || level == "basic" || level == "extended" || level == "all" ||
                    level == "onnxruntime basic" || level == "onnxruntime extended") << level;
    }
    auto names = reg.names();
    EXPECT_EQ(listed, std::set<std::string>(names.begin(), names.end()));
}

TEST(PassesCli, TextHasOneLinePerPassInPipelineOrder) {
    auto r = test::runCli({"passes"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::istringstream in(r.out);
    std::vector<std::string> firstWords;
    // A pass's options follow it on indented lines ("    to=NHWC|NCHW (default: ...) ...").
    for (std::string line; std::getline(in, line);)
        if (line.rfind("    ", 0) != 0) firstWords.push_back(line.substr(0, line.find(' ')));
    const auto& reg = passes::PassRegistry::global();
    ASSERT_EQ(firstWords.size(), reg.passes().size());
    auto all = reg.pipeline(passes::Level::All);
    ASSERT_LE(all.size(), firstWords.size());
    EXPECT_EQ(std::vector<std::string>(firstWords.begin(), firstWords.begin() + long(all.size())), all);
}

TEST(PassesCli, UnknownOptionIsAUsageError) {
    EXPECT_EQ(test::runCli({"passes", "--bogus"}).exitCode, 2);
}
