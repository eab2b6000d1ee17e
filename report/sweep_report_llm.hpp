// The sweep report's LLM cost per cell (issue 22): tokens and dollars each cell paid for, those
// it reused from the response cache (charged to the cell that first paid, so a cell's "alone"
// cost does not depend on the order the cells ran in), the prompt cache's hit share and what it
// saved, and answers cut off at the output limit. Renders the "llm" object of a cell of
// sweep_report_json (report/sweep_report.hpp).

#ifndef PALLADIUM_STORE_SWEEP_REPORT_LLM_HPP_
#define PALLADIUM_STORE_SWEEP_REPORT_LLM_HPP_

#include <string>

#include <nlohmann/json.hpp>

namespace palladium {

// "## LLM cost per cell" with one row per cell; "" when no cell paid or reused anything and
// none was cut off (an offline sweep's report stays as it was).
std::string llm_cost_markdown(const nlohmann::ordered_json& cells);

// The columns cells.csv gains, and one cell's values for them.
std::string llm_cost_csv_header();
std::string llm_cost_csv_row(const nlohmann::ordered_json& llm);

}  // namespace palladium

#endif  // PALLADIUM_STORE_SWEEP_REPORT_LLM_HPP_
