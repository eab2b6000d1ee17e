#include "workloads/workload_catalog.hpp"

#include <filesystem>

#include <gtest/gtest.h>

namespace palladium {
namespace {

std::string error_of(const std::string& text) {
  try {
    WorkloadCatalog::parse(text, "c.json");
  } catch (const WorkloadCatalogError& e) {
    return e.what();
  }
  return "";
}

std::string one(const std::string& fields) { return R"({"workloads": [{)" + fields + "}]}"; }

TEST(WorkloadCatalog, TheBuiltInCatalogIsTheFiftyWorkloadsWithTheirFiles) {
  const auto& c = workload_catalog();
  ASSERT_EQ(c.entries().size(), 50u);
  EXPECT_EQ(c.entries().front().id, "1p");
  const WorkloadEntry* mm = c.find("8p");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->name, "GEMM");
  EXPECT_EQ(mm->module, "workloads/wl_8p.py");
  EXPECT_EQ(mm->hand_tuned, "workloads/hand_tuned/ref_8p.py");
  EXPECT_EQ(c.find("12p")->hand_tuned, std::nullopt);
  EXPECT_EQ(c.find("11p")->static_argnums, std::vector<int>{3});
  EXPECT_EQ(c.find("99z"), nullptr);
  EXPECT_EQ(c.hand_tuned_ids(),
            (std::vector<std::string>{"1p", "2p", "3p", "4p", "6p", "7p", "8p", "11p"}));
  const std::filesystem::path home = PALLADIUM_SOURCE_DIR;
  for (const auto& e : c.entries()) {
    EXPECT_TRUE(std::filesystem::is_regular_file(home / e.module)) << e.module;
    if (e.hand_tuned) {
      EXPECT_TRUE(std::filesystem::is_regular_file(home / *e.hand_tuned)) << e.id;
    }
  }
  EXPECT_EQ(c.id_list().rfind("1p, 2p, 3p", 0), 0u);
}

TEST(WorkloadCatalog, BadInputNamesTheFileTheEntryAndTheField) {
  EXPECT_EQ(error_of("{").rfind("c.json: (file): not JSON", 0), 0u);
  EXPECT_EQ(error_of("[]"), "c.json: (top level): expected an object with a 'workloads' list");
  EXPECT_EQ(error_of(one(R"("id": "8p")")),
            "c.json: workloads[0] (8p): 'name' must be a non-empty string");
  const std::string base = R"("id": "8p", "name": "M", "module": "workloads/wl_8p.py")";
  EXPECT_EQ(error_of(one(base + R"(, "static_argnums": [])")),
            "c.json: workloads[0] (8p): 'hand_tuned' must be a path or null");
  EXPECT_EQ(error_of(one(base + R"(, "hand_tuned": null, "static_argnums": ["3"])")),
            "c.json: workloads[0] (8p): 'static_argnums' must be a list of input indices, not \"3\"");
  const std::string entry = "{" + base + R"(, "hand_tuned": null, "static_argnums": []})";
  EXPECT_EQ(error_of(R"({"workloads": [)" + entry + "," + entry + "]}"),
            "c.json: workloads[1] (8p): the id appears twice");
  EXPECT_EQ(WorkloadCatalog::parse(R"({"workloads": [)" + entry + "]}", "c.json").entries().size(), 1u);
}

}  // namespace
}  // namespace palladium
