#include "report/sweep_report_llm.hpp"

#include <cstdio>

namespace palladium {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string num(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return fmt("%.6g", v.get<double>());
}

int64_t i64(const nlohmann::ordered_json& v) { return v.get<int64_t>(); }

}  // namespace

std::string llm_cost_markdown(const nlohmann::ordered_json& cells) {
  bool any = false;
  for (const auto& c : cells) {
    const auto& u = c["llm"];
    any = any || u["cost_usd"].get<double>() > 0 || u["reused"]["usd"].get<double>() > 0 ||
          i64(u["cached_prompt_tokens"]) > 0 || i64(u["truncated"]) > 0;
  }
  if (!any) return "";
  std::string md =
      "## LLM cost per cell\n\nPaid: answers this cell's own calls fetched. Reused: answers it "
      "took from the response cache, charged to the cell that first paid for them; alone = paid + "
      "reused is what the cell would cost by itself, whatever order the cells ran in. Cache: the "
      "share of the cell's prompt tokens the provider served from its prompt cache, and the "
      "dollars that saved.\n\n"
      "| cell | paid tokens in / out | paid | reused tokens in / out | reused | alone | prompt "
      "cache | cache saved | cut off |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : cells) {
    const auto& u = c["llm"];
    const auto& paid = u["paid"];
    const auto& reused = u["reused"];
    const int64_t prompt = i64(u["prompt_tokens"]);
    const std::string hit =
        prompt > 0 ? fmt("%.1f%%", 100.0 * static_cast<double>(i64(u["cached_prompt_tokens"])) /
                                       static_cast<double>(prompt))
                   : "-";
    md += "| " + c["key"].get<std::string>() + " | " + std::to_string(i64(paid["prompt_tokens"])) +
          " / " + std::to_string(i64(paid["output_tokens"])) + " | " +
          fmt("$%.4f", paid["usd"].get<double>()) + " | " +
          std::to_string(i64(reused["prompt_tokens"])) + " / " +
          std::to_string(i64(reused["output_tokens"])) + " | " +
          fmt("$%.4f", reused["usd"].get<double>()) + " | " +
          fmt("$%.4f", u["alone_usd"].get<double>()) + " | " + hit + " | " +
          (u["cache_saved_usd"].is_null() ? std::string("-")
                                          : fmt("$%.4f", u["cache_saved_usd"].get<double>())) +
          " | " + std::to_string(i64(u["truncated"])) + " |\n";
  }
  return md + "\n";
}

std::string llm_cost_csv_header() {
  return "cached_prompt_tokens,cache_saved_usd,paid_prompt_tokens,paid_output_tokens,paid_usd,"
         "reused_prompt_tokens,reused_output_tokens,reused_usd,alone_usd,truncated";
}

std::string llm_cost_csv_row(const nlohmann::ordered_json& u) {
  return num(u["cached_prompt_tokens"]) + "," + num(u["cache_saved_usd"]) + "," +
         num(u["paid"]["prompt_tokens"]) + "," + num(u["paid"]["output_tokens"]) + "," +
         num(u["paid"]["usd"]) + "," + num(u["reused"]["prompt_tokens"]) + "," +
         num(u["reused"]["output_tokens"]) + "," + num(u["reused"]["usd"]) + "," +
         num(u["alone_usd"]) + "," + num(u["truncated"]);
}

}  // namespace palladium
