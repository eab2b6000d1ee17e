#include "report/sweep_report_llm.hpp"

#include <gtest/gtest.h>

#include "report/sweep_report.hpp"

namespace palladium {
namespace {

ReportCell cell(const std::string& key) {
  ReportCell c;
  c.key = key;
  c.run_id = 1;
  c.status = "done";
  c.method = "iterative";
  c.model = "gpt-x";
  c.suite = {"8p"};
  return c;
}

// Two cells with the same config and seed: the first ran first and paid, the second reused.
SweepReportInput paid_and_reused() {
  SweepReportInput in;
  in.title = "t";
  ReportCell a = cell("seed=1,order=first");
  a.usage.calls = 2;
  a.usage.prompt_tokens = 4000;
  a.usage.cached_prompt_tokens = 1000;
  a.usage.cost_usd = 0.02;
  a.usage.cache_saved_usd = 0.00025;
  a.usage.paid_prompt_tokens = 4000;
  a.usage.paid_output_tokens = 800;
  a.usage.paid_usd = 0.02;
  a.usage.truncated = 1;
  ReportCell b = cell("seed=1,order=second");
  b.usage.reused_prompt_tokens = 4000;
  b.usage.reused_output_tokens = 800;
  b.usage.reused_usd = 0.02;
  in.cells = {a, b};
  return in;
}

TEST(SweepReportLlm, ACellThatReusedAnswersCostsAloneWhatThePayerPaid) {
  const auto r = sweep_report_json(paid_and_reused());
  const auto& a = r["cells"][0]["llm"];
  const auto& b = r["cells"][1]["llm"];
  EXPECT_DOUBLE_EQ(a["alone_usd"].get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(b["alone_usd"].get<double>(), 0.02);  // order of the cells does not matter
  EXPECT_DOUBLE_EQ(b["paid"]["usd"].get<double>(), 0.0);
  EXPECT_TRUE(b["cache_saved_usd"].is_null());

  const std::string md = sweep_report_markdown(r);
  EXPECT_NE(md.find("## LLM cost per cell"), std::string::npos) << md;
  EXPECT_NE(md.find("| seed=1,order=first | 4000 / 800 | $0.0200 | 0 / 0 | $0.0000 | $0.0200 | "
                    "25.0% | $0.0003 | 1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| seed=1,order=second | 0 / 0 | $0.0000 | 4000 / 800 | $0.0200 | $0.0200 | "
                    "- | - | 0 |"),
            std::string::npos)
      << md;

  const std::string csv = sweep_report_csv(r).at("cells.csv");
  EXPECT_NE(csv.find(llm_cost_csv_header()), std::string::npos);
  EXPECT_NE(csv.find(",1000,0.00025,4000,800,0.02,0,0,0,0.02,1\n"), std::string::npos) << csv;
}

TEST(SweepReportLlm, AnOfflineSweepHasNoLlmCostSection) {
  SweepReportInput in;
  in.title = "t";
  ReportCell c = cell("method=iterative");
  c.model = "synthetic";
  c.usage.calls = 5;
  c.usage.prompt_tokens = 900;
  in.cells = {c};
  EXPECT_EQ(sweep_report_markdown(sweep_report_json(in)).find("LLM cost per cell"),
            std::string::npos);
}

}  // namespace
}  // namespace palladium
