// The README and docs/*.md cite files (Markdown links and `core/...`-style paths): every one must
// exist, so a rename or a removal that forgets the docs fails here. Also catches merge-conflict
// markers committed into a page.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <regex>
#include <set>

namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = fs::path(PASSLENS_DOCS_DIR).parent_path();

std::vector<fs::path> pages() {
    std::vector<fs::path> out = {kSourceDir / "README.md"};
    for (const auto& e : fs::directory_iterator(kSourceDir / "docs"))
        if (e.path().extension() == ".md") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

/// A cited path holds if it exists, or names a file by its stem (`core/ir/NodeList` for
/// NodeList.h/.cpp), or is cut short with "…" and some file starts with what is left.
bool citedPathHolds(const fs::path& base, std::string cited) {
    bool cutShort = false;
    if (const auto dots = cited.find("…"); dots != std::string::npos) {
        cited.resize(dots);
        cutShort = true;
    }
    const fs::path p = base / cited;
    if (!cutShort && fs::exists(p)) return true;
    if (!fs::is_directory(p.parent_path())) return false;
    const std::string stem = p.filename().string();
    for (const auto& e : fs::directory_iterator(p.parent_path())) {
        const std::string name = e.path().filename().string();
        if (cutShort ? name.rfind(stem, 0) == 0 : name.rfind(stem + ".", 0) == 0) return true;
    }
    return false;
}

TEST(DocsPaths, EveryCitedFileExists) {
    const std::regex link(R"(\]\(([^)\s]+)\))");
    const std::regex codePath(R"(`((?:core|ui|app|tests|packaging|resources|docs|cmake|\.ci)/[^`\s]*)`)");
    size_t checked = 0;
    for (const auto& page : pages()) {
        std::ifstream in(page);
        std::string line;
        for (int lineNo = 1; std::getline(in, line); ++lineNo) {
            const std::string where = page.filename().string() + ":" + std::to_string(lineNo);
            EXPECT_FALSE(line.rfind("<<<<<<< ", 0) == 0 || line.rfind(">>>>>>> ", 0) == 0) << where << ": merge-conflict marker";
            for (auto it = std::sregex_iterator(line.begin(), line.end(), link); it != std::sregex_iterator(); ++it) {
                std::string target = (*it)[1].str();
                if (target.rfind("http", 0) == 0 || target[0] == '#' || target.rfind("mailto:", 0) == 0) continue;
                target = target.substr(0, target.find('#'));
                EXPECT_TRUE(citedPathHolds(page.parent_path(), target)) << where << ": link to missing " << target;
                ++checked;
            }
            for (auto it = std::sregex_iterator(line.begin(), line.end(), codePath); it != std::sregex_iterator(); ++it) {
                std::string cited = (*it)[1].str();
                if (cited.find_first_of("*{<") != std::string::npos) continue;  // a pattern, not a file
                cited = std::regex_replace(cited, std::regex(":[0-9]+$"), "");
                while (!cited.empty() && std::string(".,;)").find(cited.back()) != std::string::npos) cited.pop_back();
                EXPECT_TRUE(citedPathHolds(kSourceDir, cited)) << where << ": cites missing " << cited;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 50u) << "the reader found too few citations: is the regex still right?";
}

TEST(DocsPaths, CitedPathRuleRejectsWhatIsMissing) {
    EXPECT_TRUE(citedPathHolds(kSourceDir, "core/ir/Graph.h"));
    EXPECT_TRUE(citedPathHolds(kSourceDir, "core/ir/Graph"));
    EXPECT_FALSE(citedPathHolds(kSourceDir, "core/ir/Grap"));
    EXPECT_FALSE(citedPathHolds(kSourceDir, "core/memory/InplaceRules.cpp"));
    EXPECT_TRUE(citedPathHolds(kSourceDir, "core/ir/Gra…"));
}

TEST(DocsPaths, ReadmeStaysShortAndTopLevelHoldsOnlyTheProjectLayout) {
    std::ifstream in(kSourceDir / "README.md");
    size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    EXPECT_LE(lines, 200u) << "README.md is for newcomers: move reference material to docs/";
    const std::set<std::string> allowed = {"CMakeLists.txt", "README.md", "app", "core", "ui", "resources", "tests",
                                           "packaging", "docs", "python", "cmake", ".ci", ".git", ".gitignore", ".clang-format", ".cache"};
    for (const auto& e : fs::directory_iterator(kSourceDir)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("build", 0) == 0) continue;  // build trees are git-ignored
        EXPECT_TRUE(allowed.count(name)) << "stray top-level entry: " << name;
    }
}

}  // namespace
